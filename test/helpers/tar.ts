/** A tar's entries read back (tar-stream): files by name with their text and mode, folders with no text. */
import * as tarStream from "tar-stream";

export async function tarEntries(tar: Buffer): Promise<{ name: string; type: string; mode: number; text?: string }[]> {
    const out: { name: string; type: string; mode: number; text?: string }[] = [];
    const extract = tarStream.extract();
    extract.end(tar);
    for await (const entry of extract) {
        const chunks: Buffer[] = [];
        for await (const c of entry) chunks.push(c as Buffer);
        const h = entry.header;
        out.push({
            name: h.name,
            type: h.type ?? "file",
            mode: h.mode ?? 0,
            ...(h.type === "file" ? { text: Buffer.concat(chunks).toString() } : {}),
        });
    }
    return out;
}

/** A layer's files, by name: their text. */
export async function layerFiles(tar: Buffer): Promise<Record<string, string>> {
    return Object.fromEntries((await tarEntries(tar)).filter((e) => e.text !== undefined).map((e) => [e.name, e.text!]));
}
