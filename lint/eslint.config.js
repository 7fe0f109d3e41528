// The lint the README's test command runs (test/lint.test.ts, as npm run lint): typescript-eslint's
// recommended rules, with the exceptions this project makes on purpose, each with its reason.
"use strict";
const js = require("@eslint/js");
const tseslint = require("typescript-eslint");

module.exports = tseslint.config(
    { ignores: ["node_modules/**", "test/fixtures/**", "**/*.d.ts"] },
    js.configs.recommended,
    ...tseslint.configs.recommended,
    {
        languageOptions: {
            ecmaVersion: 2022,
            sourceType: "commonjs",
            globals: {
                require: "readonly",
                module: "writable",
                process: "readonly",
                console: "readonly",
                __dirname: "readonly",
                Buffer: "readonly",
                setTimeout: "readonly",
                clearTimeout: "readonly",
                setInterval: "readonly",
                clearInterval: "readonly",
                setImmediate: "readonly",
                URL: "readonly",
            },
        },
        rules: {
            // the product's objects are typed (lab/argo/types.ts, sim/objects.ts); an any left says why where it stands
            "@typescript-eslint/no-explicit-any": "error",
            // dynamic providers require() the lab inside their methods (the engine serializes them), and the CLI loads commands lazily
            "@typescript-eslint/no-require-imports": "off",
            "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
        },
    },
    {
        // a test reads the simulation's objects and its fixtures' JSON as it pleases: what it asserts is checked at run time
        files: ["test/**/*.ts"],
        rules: { "@typescript-eslint/no-explicit-any": "off" },
    },
);
