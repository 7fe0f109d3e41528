/**
 * A word of a printed command, quoted for a POSIX shell where it needs it (a path with a space):
 * single quotes, each ' inside written '\''. (One rule, so no shell-quoting package for it.)
 */
export const shellWord = (w: string) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);
