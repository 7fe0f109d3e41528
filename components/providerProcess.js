// The dynamic providers' code that Pulumi states hold requires `<project>/components/providerProcess`
// (program/labModule.ts as it was serialized into them), and a `destroy` runs that code: this path
// answers it. The module itself is program/providerProcess.ts.
"use strict";
module.exports = require("../program/providerProcess");
