/**
 * One schema for the stack's configuration (lab/platform/stackConfig.ts): index.ts, preflight and
 * up read their values through it, and refuse a bad one before anything is installed or downloaded,
 * in one line naming the key, the file and the allowed values.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { PROJECT_DIR, readStackConfig, readStackFile } from "../cli/stackConfig";
import { DEFAULTS } from "../lab/platform/defaults";
import { CONFIG_KEYS, parseStackConfig } from "../lab/platform/stackConfig";
import { BIN, runCli } from "./helpers/cli";
import { spawnSync } from "child_process";

const PROJECT = path.resolve(__dirname, "..");

describe("the stack configuration's schema", () => {
    it("has the keys Pulumi.yaml declares, with the same defaults", () => {
        const project = parse(fs.readFileSync(path.join(PROJECT, "Pulumi.yaml"), "utf8"));
        assert.deepStrictEqual([...CONFIG_KEYS].sort(), Object.keys(project.config).sort());
        assert.deepStrictEqual(parseStackConfig({}, "x"), { ...DEFAULTS, kubeconfigPath: "" });
    });

    it("takes values as YAML writes them and as Pulumi's config holds them (strings)", () => {
        const c = parseStackConfig(
            { solveThrough: "4", tenantsLab: "true", tenantsSolveThrough: 2, rolloutDoctor: "off", syncTimeoutSeconds: "60" },
            "x",
        );
        assert.deepStrictEqual(
            [c.solveThrough, c.tenantsLab, c.tenantsSolveThrough, c.rolloutDoctor, c.syncTimeoutSeconds],
            [4, true, 2, "off", 60],
        );
    });

    const bad: [Record<string, unknown>, RegExp][] = [
        [
            { k3sVersion: "latest" },
            /^Pulumi\.dev\.yaml: gitops-lab:k3sVersion is "latest"; allowed: a k3s release tag like v1\.36\.4\+k3s1 \(pulumi config set k3sVersion <value>, or edit the file\)$/,
        ],
        [{ argocdVersion: "v3.4.0" }, /gitops-lab:argocdVersion is "v3\.4\.0"; allowed: one of v3\.6\.2, v3\.5\.8, v3\.5\.1 /],
        [{ solveThrough: "nine" }, /^Pulumi\.dev\.yaml: gitops-lab:solveThrough is "nine"; allowed: a whole number from 0 to 8 /],
        [{ solveThrough: 9 }, /gitops-lab:solveThrough is 9; allowed: a whole number from 0 to 8 /],
        [{ rolloutDoctor: "maybe" }, /gitops-lab:rolloutDoctor is "maybe"; allowed: auto, on or off /],
        [{ tenantsSolveThrough: 7 }, /gitops-lab:tenantsSolveThrough is 7; allowed: 1, 2 or 3 /],
        [{ tenantsLab: "yes" }, /gitops-lab:tenantsLab is "yes"; allowed: true or false /],
        // quoted, these reach the program as written (unquoted, Pulumi reads them as YAML's number or boolean: 8, true)
        [
            { solveThrough: "8.0" },
            /gitops-lab:solveThrough is "8\.0"; allowed: [^;]*; Pulumi hands the program the value as it is written \(8\.0\), and a whole number is read in digits alone: write 8 /,
        ],
        // a zero-width space pasted with a value or into a key: named, with where it is
        [
            { root: "/srv/lab\u200b" },
            /gitops-lab:root's value holds a character nobody sees \(U\+200B, a zero-width space, pasted with it\?\) at position 9: type the value again \("\/srv\/lab"\)$/,
        ],
        [
            { "solve\u200bThrough": 8 },
            /gitops-lab:solveThrough's key holds a character nobody sees \(U\+200B, a zero-width space, pasted with it\?\) at position 6: type the key again/,
        ],
        // out of range, or a key that takes no number: no digits offered
        [{ solveThrough: "9.0" }, /gitops-lab:solveThrough is "9\.0"; allowed: a whole number from 0 to 8 \(pulumi config set/],
        [{ argocdVersion: "3.0" }, /gitops-lab:argocdVersion is "3\.0"; allowed: one of v3\.6\.2, v3\.5\.8, v3\.5\.1 \(pulumi config set/],
        [
            { tenantsLab: "True" },
            /gitops-lab:tenantsLab is "True"; allowed: true or false; [^(]*reads true and false in lower case alone: write true /,
        ],
        // a block scalar (root: | and the path on the next line) keeps its line break
        [
            { root: "/srv/lab\n" },
            /gitops-lab:root is "\/srv\/lab\\n"; allowed: [^;]*; it ends with a line break, which a block scalar \(\| or >\) keeps: write the value on the key's own line \(gitops-lab:root: \/srv\/lab\)/,
        ],
        [
            { k3sVersion: "v1.36.4-k3s1" },
            /gitops-lab:k3sVersion is "v1\.36\.4-k3s1"; allowed: a k3s release tag like v1\.36\.4\+k3s1; k3s releases are tagged v, the Kubernetes version, \+ and k3sN \(v1\.36\.4-k3s1 is the rancher\/k3s image's tag, with - for \+\): write v1\.36\.4\+k3s1 /,
        ],
        [{ k3sVersion: "1.36.4" }, /; k3s releases are tagged v, .*\(as on k3s's releases page\): write v1\.36\.4\+k3s1 /],
        [{ syncTimeoutSeconds: "0" }, /gitops-lab:syncTimeoutSeconds is "0"; allowed: a whole number of seconds from 1 to 86400 /],
        [
            { solveThruogh: 4 },
            /^Pulumi\.dev\.yaml: gitops-lab:solveThruogh is not a key of this lab; did you mean gitops-lab:solveThrough\?$/,
        ],
        [
            { tenantslab: true },
            /gitops-lab:tenantslab is not a key of this lab; did you mean gitops-lab:tenantsLab\? \(keys are case-sensitive\)$/,
        ],
        [
            { gitDaemonImage: "alpine/git:2.47.2" },
            /gitops-lab:gitDaemonImage is "alpine\/git:2\.47\.2"; allowed: an image with git daemon in it; alpine\/git has no git daemon/,
        ],
        [
            { gitDaemonImage: "debian:bookworm-slim" },
            /gitops-lab:gitDaemonImage is "debian:bookworm-slim"; allowed: an image with git daemon in it; debian, ubuntu, alpine and busybox are base images without git: leave the key out for docker\.io\/library\/buildpack-deps:bookworm-scm/,
        ],
        [
            { gitDaemonImage: "docker.io/library/ubuntu@sha256:" + "a".repeat(64) },
            /allowed: an image with git daemon in it; debian, ubuntu/,
        ],
        [
            { root: "$HOME/lab" },
            /gitops-lab:root is "\$HOME\/lab"; allowed: an absolute directory path, e\.g\. \/; \$HOME is not expanded here \(no shell reads the file\): write the whole path/,
        ],
        [
            { solveThrough: "${SOLVE_THROUGH}" },
            /gitops-lab:solveThrough is "\$\{SOLVE_THROUGH\}"; allowed: [^;]*; \$SOLVE_THROUGH is not expanded here \(no shell reads the file\): write the value itself \(pulumi config set solveThrough <value>, or edit the file\)$/,
        ],
        [
            { gitDaemonImage: `docker.io/library/buildpack-deps@sha256:${"a".repeat(63)}` },
            /gitops-lab:gitDaemonImage is "[^"]+"; allowed: an image reference with git daemon in it, registry\/name:tag or @sha256: and 64 lower-case hex digits/,
        ],
        [
            { gitDaemonImage: `docker.io/library/buildpack-deps@sha256:${"A".repeat(64)}` },
            /gitops-lab:gitDaemonImage is "[^"]+"; allowed: /,
        ],
        [{ flavour: "x" }, /gitops-lab:flavour is not a key of this lab; the keys are root, solveThrough, /],
        [
            { through: 4 },
            /^Pulumi\.dev\.yaml: gitops-lab:through is not a key of this lab: --through N is simulate's option; in a stack file it is gitops-lab:solveThrough$/,
        ],
        [
            { root: "\u201c/srv/lab\u201d" },
            /gitops-lab:root is "“\/srv\/lab”"; allowed: an absolute directory path, e\.g\. \/; its quotes are typographic \(“ ”, copied from a document\?\), which YAML reads as part of the value: use plain quotes or none \(\/srv\/lab\)/,
        ],
        [
            { solveThrough: "3# stop after the incident" },
            /gitops-lab:solveThrough is "3# stop after the incident"; allowed: a whole number from 0 to 8; YAML reads # as a comment only after a space, so the comment is part of the value: write 3 # stop after the incident \(pulumi config set/,
        ],
        [
            { kubeconfig: "/etc/k.yaml" },
            /gitops-lab:kubeconfig is not a key of this lab: --kubeconfig is verify's [^;]*; in a stack file it is gitops-lab:kubeconfigPath$/,
        ],
    ];
    it("an unexpanded $VAR in imageRegistry shows the variable's value with its credentials masked", () => {
        process.env.GITOPS_LAB_TEST_REGISTRY = "https://u:s3cret@reg.example:5000";
        try {
            assert.throws(
                () => parseStackConfig({ imageRegistry: "$GITOPS_LAB_TEST_REGISTRY" }, "Pulumi.dev.yaml"),
                (e: any) => e.message.includes("(https://***@reg.example:5000)") && !e.message.includes("s3cret"),
            );
        } finally {
            delete process.env.GITOPS_LAB_TEST_REGISTRY;
        }
    });

    for (const [values, message] of bad) {
        it(`refuses ${JSON.stringify(values)} in one line naming the key, the file and what is allowed`, () => {
            assert.throws(
                () => parseStackConfig(values, "Pulumi.dev.yaml"),
                (e: any) => message.test(e.message) && !e.message.includes("\n"),
            );
        });
    }
});

describe("the stack file as preflight and up read it", function () {
    this.timeout(120_000);
    const file = (text: string) => {
        const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "stack-")), "Pulumi.dev.yaml");
        fs.writeFileSync(f, text);
        return f;
    };

    // as the Pulumi CLI (3.248) reads the same file: pulumi config --json lists gitops-lab:syncTimeoutSeconds 600,
    // gitops-lab:root and gitops-lab:solveThrough 4 from it
    it("a merge key (<<: *defaults) and the older gitops-lab:config:KEY form are read as Pulumi reads them", () => {
        const f = file(
            "x-lab-defaults: &defaults\n  gitops-lab:syncTimeoutSeconds: 600\nconfig:\n  <<: *defaults\n  gitops-lab:root: /tmp/x\n  gitops-lab:config:solveThrough: 4\n",
        );
        const config = readStackConfig(PROJECT, "dev", f);
        assert.strictEqual(config.syncTimeoutSeconds, 600);
        assert.strictEqual(config.root, "/tmp/x");
        assert.strictEqual(config.solveThrough, 4);
        // and a value out of range in the older form is refused as in the preferred one
        assert.throws(
            () => readStackConfig(PROJECT, "dev", file("config:\n  gitops-lab:config:solveThrough: 12\n")),
            /gitops-lab:solveThrough/,
        );
    });

    it("a YAML syntax error names the file and the line, in one line", () => {
        const f = file("config:\n  gitops-lab:solveThrough: 4\n  gitops-lab:root: [unclosed\n");
        assert.throws(
            () => readStackConfig(PROJECT, "dev", f),
            (e: any) =>
                new RegExp(`^${f.replace(/[.]/g, "\\.")} line \\d+, column \\d+: .*; fix the YAML there$`).test(e.message) &&
                !e.message.includes("\n"),
        );
    });

    it("given a line indented deeper than the key above it (which has a value), then the error names that line, not the key's", () => {
        const f = file("config:\n  gitops-lab:root: /\n  gitops-lab:solveThrough: 8\n    gitops-lab:tenantsLab: on\n");
        assert.throws(
            () => readStackConfig(PROJECT, "dev", f),
            (e: any) =>
                e.message ===
                `${f} line 4: indented deeper than the key above it, which already has a value; align it with the other keys (fix the YAML there)`,
        );
    });

    it("a stack file saved as UTF-16: said, with how to save it as UTF-8", () => {
        const f = file("");
        fs.writeFileSync(f, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("config:\n  gitops-lab:solveThrough: 4\n", "utf16le")]));
        assert.throws(
            () => readStackConfig(PROJECT, "dev", f),
            (e: any) =>
                e.message ===
                `${f} is UTF-16 (it starts with the bytes FF FE), and YAML here is UTF-8: save it as UTF-8 (iconv -f UTF-16 -t UTF-8)`,
        );
    });

    it("two YAML documents (a --- and a second config:): said, with how to merge them", () => {
        const f = file("config:\n  gitops-lab:root: /tmp/x\n---\nconfig:\n  gitops-lab:solveThrough: 2\n");
        assert.throws(
            () => readStackConfig(PROJECT, "dev", f),
            (e: any) =>
                e.message ===
                `${f} line 3, column 1: a second YAML document begins here (after a --- line), and a stack file is one document, one config: mapping: merge the two into one and remove the ---`,
        );
    });

    it("the program's configuration (every key, Pulumi.yaml's defaults as Pulumi gives them) with tenantsLab false is taken", () => {
        // Pulumi applies the project's defaults before the program reads its config: every key has a value there
        const project = parse(fs.readFileSync(path.join(PROJECT, "Pulumi.yaml"), "utf8")) as {
            config: Record<string, { default?: unknown }>;
        };
        const values = Object.fromEntries(
            Object.entries(project.config).map(([k, v]) => [
                k.replace(/^gitops-lab:/, ""),
                v.default === undefined ? undefined : String(v.default),
            ]),
        );
        assert.strictEqual(values.tenantsSolveThrough, "3", "Pulumi.yaml gives the tenants keys defaults");
        assert.strictEqual(parseStackConfig({ ...values, tenantsLab: "false" }, "the program").tenantsLab, false);
    });

    it("keys of other packages and secrets are left to Pulumi; the lab's own are checked", () => {
        const f = file("config:\n  kubernetes:context: x\n  gitops-lab:solveThrough: 2\n  gitops-lab:kubeconfigPath:\n    secure: abc\n");
        const c = readStackConfig(PROJECT, "dev", f);
        assert.deepStrictEqual([c.solveThrough, c.kubeconfigPath], [2, ""]);
    });

    it("up refuses a bad value before anything is installed: exit 1, one line naming the key and the file", () => {
        const f = file("config:\n  gitops-lab:k3sVersion: latest\n");
        const r = runCli("up", ["--config-file", f], { timeoutMs: 60_000 });
        assert.strictEqual(r.code, 1, r.out);
        assert.strictEqual(
            r.stderr,
            `gitops-lab up: ${f}: gitops-lab:k3sVersion is "latest"; allowed: a k3s release tag like v1.36.4+k3s1 (pulumi config set k3sVersion <value>, or edit the file)\n`,
        );
        assert.doesNotMatch(r.stdout, /PASS|Pulumi CLI/, "no preflight ran, no Pulumi was started");
    });

    it("preflight checks a configuration file without up", () => {
        const bad = file("config:\n  gitops-lab:k3sVersion: latest\n");
        const r = runCli("preflight", ["--config-file", bad], { timeoutMs: 60_000 });
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stderr, /^gitops-lab preflight: .*: gitops-lab:k3sVersion is "latest"; allowed: a k3s release tag/);
        assert.doesNotMatch(r.stdout, /PASS|FAIL/, "no host check ran on a bad configuration");
        const missing = runCli("preflight", ["--config-file", "/nonexistent/Pulumi.x.yaml"], { timeoutMs: 60_000 });
        assert.strictEqual(missing.code, 2, missing.out);
        assert.match(missing.stderr, /--config-file \/nonexistent\/Pulumi\.x\.yaml does not exist/);
        const good = file(`config:\n  gitops-lab:root: ${fs.mkdtempSync(path.join(os.tmpdir(), "preflight-root-"))}\n`);
        const ok = runCli("preflight", ["--config-file", good], { timeoutMs: 60_000 });
        assert.match(ok.stdout, /^(PASS|WARN|FAIL) /m, ok.out);
        assert.doesNotMatch(ok.stdout, /the stack's configuration/);
        // a tenants key with the tenants lab off (what pulumi config set tenantsLab false leaves): said, not refused
        const idle = file(
            `config:\n  gitops-lab:root: ${fs.mkdtempSync(path.join(os.tmpdir(), "preflight-root-"))}\n  gitops-lab:tenantsSolveThrough: 2\n  gitops-lab:imageRegistry: http://127.0.0.1:5000\n`,
        );
        const warned = runCli("preflight", ["--config-file", idle], { timeoutMs: 60_000 });
        assert.match(
            warned.stdout,
            /^WARN {2}the stack's configuration: \S+ sets gitops-lab:tenantsSolveThrough and gitops-lab:imageRegistry, but gitops-lab:tenantsLab is false: no tenants lab is built \(pulumi config set tenantsLab true to build it\)$/m,
            warned.out,
        );
        // the same keys written at their defaults (imageRegistry: '', tenantsSolveThrough: 3) set nothing: nothing said
        const defaults = file(
            `config:\n  gitops-lab:root: ${fs.mkdtempSync(path.join(os.tmpdir(), "preflight-root-"))}\n  gitops-lab:tenantsSolveThrough: 3\n  gitops-lab:imageRegistry: ''\n  gitops-lab:kubeconfigPath: ""\n`,
        );
        const quiet = runCli("preflight", ["--config-file", defaults], { timeoutMs: 60_000 });
        assert.doesNotMatch(quiet.stdout, /no tenants lab is built/, quiet.out);
        // readiness deadlines written as minutes: said, not refused
        const minutes = file(
            `config:\n  gitops-lab:root: ${fs.mkdtempSync(path.join(os.tmpdir(), "preflight-root-"))}\n  gitops-lab:argocdReadyTimeoutSeconds: 10\n  gitops-lab:syncTimeoutSeconds: 3\n`,
        );
        const rushed = runCli("preflight", ["--config-file", minutes], { timeoutMs: 60_000 });
        assert.match(
            rushed.stdout,
            /^WARN {2}the stack's configuration: \S+ sets gitops-lab:argocdReadyTimeoutSeconds to 10 \(seconds\), less than the 120 s that wait can take on a fresh host \(images pulled from the internet\): up would install and stop there; 600 \(the default\) leaves room$/m,
            rushed.out,
        );
        assert.match(rushed.stdout, /^WARN {2}the stack's configuration: \S+ sets gitops-lab:syncTimeoutSeconds to 3 \(seconds\)/m);
        // the tenants lab with a wait deadline shorter than its blocked sync takes to give up: said, not refused
        const short = file(
            `config:\n  gitops-lab:root: ${fs.mkdtempSync(path.join(os.tmpdir(), "preflight-root-"))}\n  gitops-lab:tenantsLab: true\n  gitops-lab:tenantsWaitTimeoutSeconds: 120\n`,
        );
        const hurried = runCli("preflight", ["--config-file", short], { timeoutMs: 60_000 });
        assert.match(
            hurried.stdout,
            /^WARN {2}the stack's configuration: \S+ sets gitops-lab:tenantsWaitTimeoutSeconds to 120, while the tenants lab's longest wait, the blocked sync giving up, takes about 570 s on Argo CD v3\.6\.2 \(docs\/tenants-lab\.md\): up would build the lab and stop there; 900 \(the default\) leaves room$/m,
            hurried.out,
        );
        // a Pulumi ESC environment imported: what it gives is not read here, said
        const esc = runCli(
            "preflight",
            [
                "--config-file",
                file(
                    `environment:\n  - lab-env\nconfig:\n  gitops-lab:root: ${fs.mkdtempSync(path.join(os.tmpdir(), "preflight-root-"))}\n`,
                ),
            ],
            { timeoutMs: 60_000 },
        );
        assert.match(
            esc.stdout,
            /^WARN {2}the stack's configuration: \S+ imports the Pulumi ESC environment lab-env \(environment:\): a gitops-lab key it gives reaches Pulumi alone, so it is not checked here/m,
            esc.out,
        );
        // a k3s key beside kubeconfigPath (an adopted cluster): k3s is not installed, said
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-root-"));
        const kubeconfig = path.join(dir, "kc.yaml");
        fs.writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n");
        const adopted = runCli(
            "preflight",
            [
                "--config-file",
                file(
                    `config:\n  gitops-lab:root: ${dir}\n  gitops-lab:kubeconfigPath: ${kubeconfig}\n  gitops-lab:k3sVersion: v1.30.2+k3s1\n  gitops-lab:k3sReadyTimeoutSeconds: 60\n`,
                ),
            ],
            { timeoutMs: 60_000 },
        );
        assert.match(
            adopted.stdout,
            /^WARN {2}the stack's configuration: \S+ sets gitops-lab:k3sVersion and gitops-lab:k3sReadyTimeoutSeconds, but gitops-lab:kubeconfigPath adopts the cluster of \S+kc\.yaml: k3s is not installed, so they do nothing \(leave kubeconfigPath empty to install k3s\)$/m,
            adopted.out,
        );
    });

    it("preflight fails what up refuses: a root that is a file, the tenants lab's images with no way in", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-root-"));
        const kubeconfig = path.join(dir, "kubeconfig");
        fs.writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\n");
        const rootFile = path.join(dir, "a-file");
        fs.writeFileSync(rootFile, "x");
        const asFile = runCli("preflight", ["--config-file", file(`config:\n  gitops-lab:root: ${rootFile}\n`)], { timeoutMs: 60_000 });
        assert.strictEqual(asFile.code, 1, asFile.out);
        assert.match(
            asFile.stdout,
            new RegExp(`^FAIL {2}the stack's root: ${rootFile} is a file, not a folder: set root to a folder$`, "m"),
        );
        // a host without k3s, whatever this one has (its k3s is looked for where GITOPS_LAB_K3S_BIN says)
        const noK3s = fs.mkdtempSync(path.join(os.tmpdir(), "no-k3s-"));
        const noWay = runCli(
            "preflight",
            [
                "--config-file",
                file(`config:\n  gitops-lab:root: ${dir}\n  gitops-lab:kubeconfigPath: ${kubeconfig}\n  gitops-lab:tenantsLab: true\n`),
            ],
            { timeoutMs: 60_000, env: { ...process.env, GITOPS_LAB_K3S_BIN: noK3s } },
        );
        assert.strictEqual(noWay.code, 1, noWay.out);
        assert.match(noWay.stdout, /^FAIL {2}the tenants lab's images have a way into the cluster: .*set imageRegistry/m);
        // k3s to be installed (none at /usr/local/bin/k3s, as on this machine): a k3s before 1.35, and a registry it never mirrors
        // k3s to be installed (none where GITOPS_LAB_K3S_BIN says), no registries.yaml of the author's: a k3s before 1.35,
        // and a registry it never mirrors; with one that mirrors registry.lab.internal, the registry is theirs to use
        const k3sEnv = (registries: string) => ({ ...process.env, GITOPS_LAB_K3S_BIN: noK3s, GITOPS_LAB_K3S_REGISTRIES: registries });
        const tenantsOld = file(
            `config:\n  gitops-lab:root: ${dir}\n  gitops-lab:tenantsLab: true\n  gitops-lab:k3sVersion: v1.30.2+k3s1\n  gitops-lab:imageRegistry: http://127.0.0.1:5000\n`,
        );
        const old = runCli("preflight", ["--config-file", tenantsOld], { timeoutMs: 60_000, env: k3sEnv(path.join(noK3s, "none.yaml")) });
        assert.strictEqual(old.code, 1, old.out);
        assert.match(
            old.stdout,
            /^FAIL {2}k3sVersion mounts the tenants lab's images: k3sVersion v1\.30\.2\+k3s1 is Kubernetes 1\.30: [^\n]*1\.35/m,
        );
        assert.match(
            old.stdout,
            /^FAIL {2}the tenants lab's images have a way into the cluster: imageRegistry http:\/\/127\.0\.0\.1:5000 is for a cluster that mirrors registry\.lab\.internal from it/m,
        );
        const registries = path.join(noK3s, "registries.yaml");
        fs.writeFileSync(registries, 'mirrors:\n  "registry.lab.internal":\n    endpoint: ["http://127.0.0.1:5000"]\n');
        const mirrored = runCli("preflight", ["--config-file", tenantsOld], { timeoutMs: 60_000, env: k3sEnv(registries) });
        assert.doesNotMatch(mirrored.stdout, /imageRegistry http:\/\/127\.0\.0\.1:5000 is for a cluster/);
        // --root beside the file's root: which one up uses is said
        const other = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-root-"));
        const both = runCli("preflight", ["--config-file", file(`config:\n  gitops-lab:root: ${dir}\n`), "--root", other], {
            timeoutMs: 60_000,
        });
        assert.match(
            both.stdout,
            new RegExp(
                `^WARN {2}the stack's configuration: --root ${other} is checked in place of the file's root ${dir}, which up uses$`,
                "m",
            ),
        );
        // --kubeconfig-path beside the file's kubeconfigPath, which does not exist: up would fail where preflight passed
        const gone = path.join(dir, "no-such-kubeconfig.yaml");
        const adopted = runCli(
            "preflight",
            [
                "--config-file",
                file(`config:\n  gitops-lab:root: ${dir}\n  gitops-lab:kubeconfigPath: ${gone}\n`),
                "--kubeconfig-path",
                kubeconfig,
            ],
            { timeoutMs: 60_000 },
        );
        assert.match(
            adopted.stdout,
            new RegExp(
                `^WARN {2}the stack's configuration: --kubeconfig-path ${kubeconfig} is checked in place of the file's kubeconfigPath ${gone}, which up uses$`,
                "m",
            ),
        );
        // --kubeconfig-path "": the install-k3s variant checked, as an empty kubeconfigPath means in the file
        const installing = runCli(
            "preflight",
            ["--config-file", file(`config:\n  gitops-lab:root: ${dir}\n  gitops-lab:kubeconfigPath: ${gone}\n`), "--kubeconfig-path", ""],
            { timeoutMs: 60_000 },
        );
        assert.notStrictEqual(installing.code, 2, installing.out);
        assert.match(
            installing.stdout,
            new RegExp(
                `^WARN {2}the stack's configuration: --kubeconfig-path "" is checked in place of the file's kubeconfigPath ${gone}, which up uses$`,
                "m",
            ),
        );
        assert.doesNotMatch(installing.stdout, /kubeconfigPath readable/, "no cluster to adopt is checked");
    });

    it("a kubeconfig for the file, keys nested under gitops-lab:, a key with no value, a root holding a simulated lab: each said", () => {
        const said = (text: string) => runCli("preflight", ["--config-file", file(text)], { timeoutMs: 60_000 });
        const kube = said("apiVersion: v1\nkind: Config\nclusters: []\nusers: []\n");
        assert.strictEqual(kube.code, 1, kube.out);
        assert.match(
            kube.stderr,
            /is a kubeconfig \(kind: Config\), not a stack configuration: to adopt that cluster, set gitops-lab:kubeconfigPath: /,
        );
        const nested = said("config:\n  gitops-lab:\n    root: /tmp/x\n    solveThrough: 3\n");
        assert.strictEqual(nested.code, 1, nested.out);
        assert.match(
            nested.stderr,
            /gitops-lab: holds a mapping \(root, solveThrough\); Pulumi's keys are written whole, one a line under config:, as gitops-lab:root: VALUE/,
        );
        const empty = said("config:\n  gitops-lab:argocdVersion:\n");
        assert.strictEqual(empty.code, 1, empty.out);
        assert.match(empty.stderr, /gitops-lab:argocdVersion has no value: give it one, or remove the line to take the default/);
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-sim-"));
        fs.writeFileSync(path.join(root, "simulated-cluster.json"), "{}");
        const simulated = said(`config:\n  gitops-lab:root: ${root}\n`);
        assert.strictEqual(simulated.code, 1, simulated.out);
        assert.match(
            simulated.stdout,
            new RegExp(`^FAIL {2}the stack's root: ${root} holds a simulated lab .*--reset\\), or set root to another folder$`, "m"),
        );
        // a root inside it (its results folder): said too
        const inside = said(`config:\n  gitops-lab:root: ${root}/root\n`);
        assert.strictEqual(inside.code, 1, inside.out);
        assert.match(
            inside.stdout,
            new RegExp(
                `^FAIL {2}the stack's root: ${root}/root is inside the simulated lab under ${root}: a lab is not built inside another; set root to a folder outside it$`,
                "m",
            ),
        );
        fs.writeFileSync(path.join(root, "kubeconfig"), "apiVersion: v1\nkind: Config\n");
        // a folder for the kubeconfig, a file that names no cluster: each said
        // a stack adopting the cluster of `kubeconfig` (written there first, when its text is given, and removed after)
        const adopting = (kubeconfig: string, text?: string) => {
            if (text !== undefined) fs.writeFileSync(kubeconfig, text);
            try {
                return said(`config:\n  gitops-lab:root: ${root}-host\n  gitops-lab:kubeconfigPath: ${kubeconfig}\n`);
            } finally {
                if (text !== undefined) fs.rmSync(kubeconfig, { force: true });
            }
        };
        const folder = adopting(root);
        assert.strictEqual(folder.code, 1, folder.out);
        assert.match(folder.stdout, /^FAIL {2}kubeconfigPath is a cluster's: \S+ is a folder: give the kubeconfig file in it/m);
        const none = adopting(`${root}/simulated-cluster.json`);
        assert.match(
            none.stdout,
            /^FAIL {2}kubeconfigPath is a cluster's: \S+ is not a kubeconfig \(it names no cluster under clusters:\)/m,
        );
        // root: /root, read as root's home
        const home = said(`config:\n  gitops-lab:root: /root\n`);
        assert.match(
            home.stdout,
            /^WARN {2}the stack's root: root \/root puts the lab at \/root\/srv\/bare and \/root\/root\/cnpa-env: root is the folder above the lab's srv\/ and root\/ \(\/ on a lab host\), not root's home/m,
        );
        // root: /srv, read as where the bare repositories go
        assert.match(
            said(`config:\n  gitops-lab:root: /srv\n`).stdout,
            /^WARN {2}the stack's root: root \/srv puts the lab at \/srv\/srv\/bare and \/srv\/root\/cnpa-env: root is the folder above the lab's srv\/ and root\/ \(\/ on a lab host\), not the folder of the bare repositories \(the lab makes srv\/bare under root\); leave it at \//m,
        );
        // a current-context that names no context of the file (prod-west, deleted from it)
        const lost = adopting(
            `${root}-kc`,
            "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: https://10.0.0.1:6443}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: prod-east, context: {cluster: c, user: u}}]\ncurrent-context: prod-west\n",
        );
        assert.strictEqual(lost.code, 1, lost.out);
        assert.match(
            lost.stdout,
            /^FAIL {2}kubeconfigPath is a cluster's: \S+ has no current-context naming one of its contexts \(it names prod-west; prod-east\): kubectl --kubeconfig \S+ config use-context NAME$/m,
        );
        const served = adopting(`${root}/kubeconfig`);
        assert.strictEqual(served.code, 1, served.out);
        assert.match(
            served.stdout,
            /^FAIL {2}kubeconfigPath is a cluster's: \S+ is a simulated lab's kubeconfig \(gitops-lab simulate --serve writes it, for that lab alone\)/m,
        );
        // a copy of a served lab's (into ~/.kube/config), read by its contents: the same
        const copy = adopting(
            `${root}-copied-kubeconfig`,
            "apiVersion: v1\nkind: Config\nclusters: [{name: gitops-lab-sim-lab-3f2a, cluster: {server: http://127.0.0.1:40111}}]\nusers: [{name: gitops-lab-sim-lab-3f2a, user: {token: t}}]\ncontexts: [{name: gitops-lab-sim-lab-3f2a, context: {cluster: gitops-lab-sim-lab-3f2a, user: gitops-lab-sim-lab-3f2a}}]\ncurrent-context: gitops-lab-sim-lab-3f2a\n",
        );
        assert.strictEqual(copy.code, 1, copy.out);
        assert.match(copy.stdout, /^FAIL {2}kubeconfigPath is a cluster's: \S+ is a simulated lab's kubeconfig/m);
        // a kubeconfig refused for what it is is not asked with as well
        for (const r of [folder, none, lost, served, copy]) assert.doesNotMatch(r.stdout, /the adopted cluster answers/);
        fs.rmSync(root, { recursive: true, force: true });
    });

    it("unquoted numbers and booleans are taken as Pulumi 3.248 hands them over (Go's yaml.v3: 8.0, 0x2, 1_000, 010, True)", () => {
        // (pulumi config --json of such a file, v3.248.0: "8", "2", "1000", "8", "true": yaml.v3 reads them typed, then JSON
        // writes them; YAML 1.2 as read here makes a string of 1_000 and 10 of 010)
        const f = file(
            "config:\n  gitops-lab:solveThrough: 010\n  gitops-lab:tenantsSolveThrough: 0x2\n  gitops-lab:syncTimeoutSeconds: 1_000\n  gitops-lab:destroyTimeoutSeconds: 8.0e1\n  gitops-lab:tenantsLab: True\n",
        );
        const c = readStackConfig(PROJECT_DIR, "dev", f);
        assert.deepStrictEqual(
            [c.solveThrough, c.tenantsSolveThrough, c.syncTimeoutSeconds, c.destroyTimeoutSeconds, c.tenantsLab],
            [8, 2, 1000, 80, true],
        );
    });

    it("a file Pulumi would not read (no .yaml, .yml or .json), and a seconds value with a leading 0 (octal): each said", () => {
        const f = file("config:\n  gitops-lab:syncTimeoutSeconds: 0300\n");
        const octal = readStackFile(PROJECT_DIR, "dev", f);
        assert.strictEqual(octal.config.syncTimeoutSeconds, 192, 'as Pulumi hands it over (pulumi config --json: "192")');
        assert.deepStrictEqual(octal.octal, [
            "gitops-lab:syncTimeoutSeconds is written 0300, which Pulumi (Go's YAML) reads as octal, 192: write 300 if that is meant",
        ]);
        const bare = path.join(path.dirname(f), "lab-config");
        fs.renameSync(f, bare);
        assert.throws(
            () => readStackFile(PROJECT_DIR, "dev", bare),
            /: Pulumi reads a stack file by its extension, \.yaml, \.yml or \.json in lower case \("no marshaler found for file format" otherwise\), and this one has none: name it \S+\/lab-config\.yaml$/,
        );
    });

    it("a key with a space inside its quotes, a simulated lab's saved cluster for the file: each named", () => {
        assert.throws(
            () => readStackConfig(PROJECT, "dev", file('config:\n  "gitops-lab:root ": /tmp/lab\n')),
            /: "gitops-lab:root " has a space at its end \(inside the quotes\), so Pulumi reads another key than gitops-lab:root, which would take its default: write gitops-lab:root$/,
        );
        const saved = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "saved-")), "simulated-cluster.json");
        fs.writeFileSync(saved, JSON.stringify({ objects: [] }));
        assert.throws(
            () => readStackConfig(PROJECT, "dev", saved),
            /simulated-cluster\.json is a simulated lab's saved cluster \(gitops-lab simulate keeps it under its --root\), not a stack configuration/,
        );
    });

    it("kubernetes:kubeconfig in the stack file, a relative --kubeconfig-path: each said", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kube-keys-"));
        const kc = path.join(dir, "other.yaml");
        const r = runCli("preflight", ["--config-file", file(`config:\n  kubernetes:kubeconfig: ${kc}\n  gitops-lab:root: ${dir}\n`)], {
            timeoutMs: 60_000,
        });
        assert.match(
            r.stdout,
            new RegExp(
                `^WARN {2}the stack's configuration: \\S+: kubernetes:kubeconfig is set, which the lab's Kubernetes provider never reads [^\\n]*: to adopt that cluster, set gitops-lab:kubeconfigPath: ${kc}$`,
                "m",
            ),
        );
        fs.writeFileSync(kc, "apiVersion: v1\nkind: Config\n");
        const rel = runCli("preflight", ["--kubeconfig-path", "other.yaml", "--root", dir], { timeoutMs: 60_000, cwd: dir });
        assert.match(
            rel.stdout,
            new RegExp(
                `^preflight: --kubeconfig-path other\\.yaml is relative: checking ${kc} \\(in the stack, write gitops-lab:kubeconfigPath: ${kc}\\)$`,
                "m",
            ),
        );
    });

    it("a root that is one of the lab's own folders, a file this user cannot read: each one line", () => {
        const lab = runCli("preflight", ["--config-file", file("config:\n  gitops-lab:root: /srv/bare\n")], { timeoutMs: 60_000 });
        assert.strictEqual(lab.code, 1, lab.out);
        assert.match(
            lab.stdout,
            /^FAIL {2}the stack's root: root \/srv\/bare ends with srv\/bare, a folder the lab makes under its root, so the lab would go under \/srv\/bare\/srv\/bare/m,
        );
        // (as nobody, where this runs as root: a file of root's, mode 0600. Not asked elsewhere: only root can be another
        // user, and nobody must be able to read the project itself, which a checkout in a closed folder rules out)
        // (nor where nobody cannot run this Node: one kept under root's home, as CI's Node 24 is)
        // (asked as runCli runs it: a child of this process with nobody's uid and gid)
        const asNobody = (file: string, ...args: string[]) => spawnSync(file, args, { uid: 65534, gid: 65534 }).status === 0;
        const nobodyReads = process.getuid?.() === 0 && asNobody("test", "-r", BIN) && asNobody(process.execPath, "-e", "0");
        if (process.getuid?.() === 0 && nobodyReads) {
            const closed = file("config:\n  gitops-lab:solveThrough: 4\n");
            fs.chmodSync(closed, 0o600);
            fs.chmodSync(path.dirname(closed), 0o755);
            const r = runCli("preflight", ["--config-file", closed], {
                timeoutMs: 60_000,
                env: { ...process.env, HOME: os.tmpdir() },
                uid: 65534,
            });
            assert.match(
                r.stderr,
                /cannot read \S+ \(permission denied: owned by uid 0, mode 0600, and this is uid 65534\): run it as the user/,
                r.out,
            );
        }
    });

    it("a key written twice, or config: twice: both lines named, as Pulumi refuses it", () => {
        const twice = runCli(
            "preflight",
            ["--config-file", file("config:\n  gitops-lab:solveThrough: 4\n  gitops-lab:solveThrough: 6\n")],
            {
                timeoutMs: 60_000,
            },
        );
        assert.strictEqual(twice.code, 1, twice.out);
        assert.match(
            twice.stderr,
            /line 3: gitops-lab:solveThrough is written twice \(lines 2 and 3\), which Pulumi refuses \(mapping key already defined\): keep one$/m,
        );
        const blocks = runCli(
            "preflight",
            ["--config-file", file("config:\n  gitops-lab:solveThrough: 4\nconfig:\n  gitops-lab:tenantsLab: true\n")],
            {
                timeoutMs: 60_000,
            },
        );
        assert.strictEqual(blocks.code, 1, blocks.out);
        assert.match(blocks.stderr, /line 3: config is written twice \(lines 1 and 3\), [^\n]*: put every key under one config:$/m);
        // the same key in an earlier mapping (another object's) is not the line written twice
        const nested = runCli(
            "preflight",
            ["--config-file", file("config:\n  gitops-lab:a:\n    value: 1\n  gitops-lab:b:\n    value: 2\n    value: 3\n")],
            { timeoutMs: 60_000 },
        );
        assert.strictEqual(nested.code, 1, nested.out);
        assert.match(nested.stderr, /line 6: value is written twice \(lines 5 and 6\)/);
    });

    it("a folder for the file, a root or kubeconfigPath with a space at its end: each said in one line", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-dir-"));
        const folder = runCli("preflight", ["--config-file", dir], { timeoutMs: 60_000 });
        assert.strictEqual(folder.code, 1, folder.out);
        assert.match(
            folder.stderr,
            new RegExp(`^gitops-lab preflight: ${dir} is a folder, not a stack configuration file: give the file in it`),
        );
        const spaced = runCli("preflight", ["--config-file", file(`config:\n  gitops-lab:root: "${dir} "\n`)], { timeoutMs: 60_000 });
        assert.strictEqual(spaced.code, 1, spaced.out);
        assert.match(spaced.stderr, /gitops-lab:root is "[^"]+ "; allowed: a path with no space at either end/);
        // a kubeconfig that is there, pasted with a space after it: the space named, not "does not exist"
        fs.writeFileSync(path.join(dir, "kubeconfig"), "apiVersion: v1\nkind: Config\n");
        const kube = runCli("preflight", ["--config-file", file(`config:\n  gitops-lab:kubeconfigPath: "${dir}/kubeconfig "\n`)], {
            timeoutMs: 60_000,
        });
        assert.strictEqual(kube.code, 1, kube.out);
        assert.match(kube.stderr, /gitops-lab:kubeconfigPath is "[^"]+kubeconfig "; allowed: a path with no space at either end/);
    });

    it("a relative root or kubeconfigPath in the file is refused in the file's line; a secret key of the lab's is said", () => {
        const rel = runCli("preflight", ["--config-file", file("config:\n  gitops-lab:root: relative/pf\n")], { timeoutMs: 60_000 });
        assert.strictEqual(rel.code, 1, rel.out);
        assert.match(
            rel.stderr,
            /^gitops-lab preflight: \S+: gitops-lab:root is "relative\/pf"; allowed: an absolute directory path, e\.g\. \//,
        );
        const kube = runCli("preflight", ["--config-file", file("config:\n  gitops-lab:kubeconfigPath: kube/config\n")], {
            timeoutMs: 60_000,
        });
        assert.strictEqual(kube.code, 1, kube.out);
        assert.match(
            kube.stderr,
            /gitops-lab:kubeconfigPath is "kube\/config"; allowed: a kubeconfig file's absolute path, or empty to install k3s/,
        );
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-root-"));
        const secret = file(`config:\n  gitops-lab:root: ${root}\n  gitops-lab:argocdVersion:\n    secure: AAABAKs=\n`);
        const warned = runCli("preflight", ["--config-file", secret], { timeoutMs: 60_000 });
        assert.match(
            warned.stdout,
            /^WARN {2}the stack's configuration: \S+ gives gitops-lab:argocdVersion as a secret \(secure:\), which only Pulumi can read, so it is not checked here; none of the lab's keys is secret: set it plainly \(pulumi config set argocdVersion <value>\)$/m,
            warned.out,
        );
        fs.rmSync(root, { recursive: true, force: true });
    });

    it("preflight takes a relative --root from the current folder, as simulate and verify do", () => {
        const abs = fs.mkdtempSync(path.join(os.tmpdir(), "preflight-rel-"));
        const rel = path.relative(PROJECT, abs);
        const r = runCli("preflight", ["--root", rel], { timeoutMs: 60_000 });
        assert.doesNotMatch(r.stderr, /absolute/, r.out);
        assert.match(r.stdout, new RegExp(`^preflight: --root ${rel.replace(/[.]/g, "\\.")} is relative: checking ${abs}$`, "m"), r.out);
        assert.match(r.stdout, /^(PASS|WARN|FAIL) /m, r.out);
        fs.rmSync(abs, { recursive: true, force: true });
    });
});

describe("preflight --config-file through npm (npm --prefix DIR run preflight -- --config-file FILE)", function () {
    this.timeout(120_000);
    it("takes a relative file from the folder npm was started from (INIT_CWD), as the caller meant it", () => {
        const theirs = fs.mkdtempSync(path.join(os.tmpdir(), "npm-caller-"));
        try {
            const root = path.join(theirs, "lab-root");
            fs.writeFileSync(path.join(theirs, "mine.yaml"), `config:\n  gitops-lab:root: ${root}\n`);
            const r = runCli("preflight", ["--config-file", "mine.yaml"], { env: { ...process.env, INIT_CWD: theirs }, timeoutMs: 60_000 });
            assert.doesNotMatch(r.stderr, /does not exist/, r.out);
            assert.ok(r.stdout.includes(`nothing foreign at ${root}`), r.out);
        } finally {
            fs.rmSync(theirs, { recursive: true, force: true });
        }
    });
});

describe("GITOPS_LAB_STACK", function () {
    this.timeout(120_000);
    it("a value that is no stack name: one line naming it, and commands that need no stack still run", () => {
        const env = { ...process.env, GITOPS_LAB_STACK: "my stack" };
        const r = runCli("preflight", [], { env });
        assert.strictEqual(r.code, 1, r.out);
        assert.strictEqual(
            r.stderr,
            'gitops-lab preflight: GITOPS_LAB_STACK "my stack" is not a stack name (letters, digits, _ . -, starting with a letter or digit): unset it for the stack dev, or give one such as my-stack\n',
        );
        const file = runCli("preflight", [], { env: { ...process.env, GITOPS_LAB_STACK: "Pulumi.dev.yaml" } });
        assert.strictEqual(file.code, 1, file.out);
        assert.strictEqual(
            file.stderr,
            'gitops-lab preflight: GITOPS_LAB_STACK "Pulumi.dev.yaml" names a file; it takes a stack\'s name (GITOPS_LAB_STACK=dev, whose file is Pulumi.dev.yaml beside Pulumi.yaml); to check a stack file as it is, preflight --config-file Pulumi.dev.yaml\n',
        );
        // the stack named in another case than its file's: another stack, said
        const cased = runCli("preflight", [], { env: { ...process.env, GITOPS_LAB_STACK: "Dev" }, timeoutMs: 60_000 });
        assert.match(
            cased.stdout,
            /^WARN {2}the stack's configuration: \S+Pulumi\.Dev\.yaml does not exist, but Pulumi\.dev\.yaml does: stack names are case-sensitive, so this is another stack, with every key at its default; for that one, GITOPS_LAB_STACK=dev$/m,
            cased.out,
        );
        const help = runCli("verify", ["--help"], { env });
        assert.strictEqual(help.code, 0, help.out);
        assert.match(help.stdout, /^usage: gitops-lab verify/);
    });
});
