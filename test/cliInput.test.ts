/**
 * Bad input to the command line: one clear line, the right exit code, nothing created, no hang.
 * The checks run in-process; one process per family shows the command line uses them.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { checkRoot, UsageError } from "../cli/command";
import { runCli } from "./helpers/cli";

describe("a lab root from the command line (checkRoot)", () => {
    it("refuses roots on special filesystems, in one line, before anything is created", () => {
        for (const r of ["/proc/self/lab", "/proc", "/sys/fs/lab", "/dev/lab"]) {
            assert.throws(() => checkRoot(r), (e: any) => e instanceof UsageError && /^--root \/(proc|sys|dev)\S* is under \/(proc|sys|dev), a special filesystem that cannot hold the lab's files; choose a directory on a disk/.test(e.message), r);
        }
    });

    it("refuses a root that is a file, or under a file, naming the file", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "root-"));
        const file = path.join(dir, "a-file");
        fs.writeFileSync(file, "x");
        assert.throws(() => checkRoot(file), new RegExp(`^Error: --root ${file}: ${file} is a file, not a directory; choose another --root$`));
        assert.throws(() => checkRoot(path.join(file, "lab", "deeper")), new RegExp(`^Error: --root ${file}/lab/deeper: ${file} is a file, not a directory`));
        assert.deepStrictEqual(fs.readdirSync(dir), ["a-file"], "nothing was created");
    });

    it("accepts a directory, existing or not yet, and gives its absolute path without creating it", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "root-"));
        assert.strictEqual(checkRoot(dir), dir);
        assert.strictEqual(checkRoot(path.join(dir, "new", "lab")), path.join(dir, "new", "lab"));
        assert.ok(!fs.existsSync(path.join(dir, "new")));
    });
});

describe("gitops-lab with a bad root (one process each: the exit code and the line)", function () {
    this.timeout(120_000);

    it("simulate --root under /proc exits 2 at once with one line (Node's recursive mkdir would spin there)", () => {
        const r = runCli("simulate", ["--root", "/proc/self/gitops-lab"], { timeoutMs: 60_000 });
        assert.strictEqual(r.code, 2, r.out);
        assert.match(r.stderr, /^gitops-lab simulate: --root \/proc\/self\/gitops-lab is under \/proc, a special filesystem that cannot hold the lab's files; choose a directory on a disk, e\.g\. \/tmp\/gitops-lab\n$/);
    });

    it("verify --root on a file exits 2 with one line", () => {
        const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "root-")), "f");
        fs.writeFileSync(file, "");
        const r = runCli("verify", ["--root", file, "--offline"], { timeoutMs: 60_000 });
        assert.strictEqual(r.code, 2, r.out);
        assert.match(r.stderr, /^gitops-lab verify: --root \S+: \S+ is a file, not a directory; choose another --root\n$/);
    });
});
