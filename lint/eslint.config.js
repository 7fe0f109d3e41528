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
            // Kubernetes and Argo CD objects are read as plain JSON; their shapes are checked by zod where it matters
            "@typescript-eslint/no-explicit-any": "off",
            // dynamic providers require() the lab inside their methods (the engine serializes them), and the CLI loads commands lazily
            "@typescript-eslint/no-require-imports": "off",
            "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
        },
    },
);
