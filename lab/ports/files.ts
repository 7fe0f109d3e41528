/** File helpers: no half-written files (write to a temporary file in the same directory, then rename). */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";

export function writeFileAtomic(file: string, content: string): void {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
    fs.writeFileSync(tmp, content);
    fs.renameSync(tmp, file);
}

export function writeJsonAtomic(file: string, value: unknown): void {
    writeFileAtomic(file, JSON.stringify(value, null, 2) + "\n");
}

/** Reads a JSON file; `undefined` when it does not exist; a clear error when it is not JSON. */
export function readJsonIfExists<T = unknown>(file: string): T | undefined {
    let text: string;
    try {
        text = fs.readFileSync(file, "utf8");
    } catch (e: any) {
        if (e.code === "ENOENT") return undefined;
        throw e;
    }
    try {
        return JSON.parse(text) as T;
    } catch (e: any) {
        throw new Error(`${file} is not valid JSON (${e.message}); delete it to let the step run again`);
    }
}

/** YAML as a person would write it (no line folding). */
export function toYaml(obj: unknown): string {
    return stringify(obj, { lineWidth: 0 });
}

/**
 * mkdir -p whose new directories are 0755 whatever the umask (a daemon running as nobody must be
 * able to pass through them). Directories that already existed are left as they are.
 */
export function mkdirReadable(dir: string): void {
    const first = fs.mkdirSync(dir, { recursive: true });
    if (!first) return;
    for (let d = path.resolve(dir); ; d = path.dirname(d)) {
        fs.chmodSync(d, 0o755);
        if (d === path.resolve(first) || d === path.dirname(d)) break;
    }
}
