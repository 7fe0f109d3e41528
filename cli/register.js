// The dynamic providers' code that Pulumi states hold requires `<project>/cli/register.js`
// (program/labModule.ts as it was serialized into them), and a `destroy` runs that code: this path
// answers it. The loader itself is loader/register.js.
"use strict";
require("../loader/register.js");
