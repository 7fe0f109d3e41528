// Kept at this path for the dynamic providers' code that Pulumi's state already holds: it requires
// `<project>/cli/register.js` (components/labModule.ts as it was serialized), and a `destroy` runs that
// code. The loader itself is loader/register.js.
"use strict";
require("../loader/register.js");
