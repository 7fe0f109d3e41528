/**
 * The platform repository of the tenants lab, kept as real files in gitrepo/tenants: one tenant file
 * per tenant (the git files generator's input) and one kustomize directory per release. Every
 * release holds:
 * - the site's code, `code/`, which is not a resource: the lab makes it into the release's image
 *   (lab/tenants/siteImages.ts), mounted read-only at /app as an image volume, as the field report has it;
 * - the PreSync hook Job `site-setup` (backoffLimit 2, BeforeHookCreation, the default
 *   terminationMessagePolicy) running setup.sh from the release's image;
 * - the Deployment `site` (busybox, pinned) serving the release.
 * Release 1.2.0 ships the news extension's settings template; 1.1.0 and 1.2.1 do not. The setup hook
 * (code/setup.sh): for each extension settings template the release ships, it writes the extension's
 * defaults into config/system/settings.php unless the tenant's own settings already hold the
 * extension's keys; the code is read-only, so a tenant without those keys fails with the product's
 * error text until the Job's backoff limit.
 */
import * as fs from "fs";
import * as path from "path";
import { RELEASES, Tenant, TENANT_LABEL } from "./layout";

/** The image of the site and the hook (pinned; the hook script is POSIX sh). */
export const SITE_IMAGE = "busybox:1.37.0";
export const RELEASE_LABEL = "example.org/release";
/** The ConfigMap of each tenant's own settings, which the lab makes in the tenant's namespace (not Git). */
export const TENANT_SETTINGS = "site-settings";
/** The line the hook's failure ends with: the error the report quotes. */
export const HOOK_ERROR = "config/system/settings.php is not writable.";

/** Where the repository's files are kept: real files a lab author reads, edits and `kustomize build`s. */
export const PLATFORM_REPO_DIR = path.join(__dirname, "..", "..", "gitrepo", "tenants");

export function tenantFile(tenant: Tenant, release: string): string {
    return `tenant: ${tenant}\nrelease: "${release}"\n`;
}

export const tenantPath = (tenant: Tenant) => `tenants/${tenant}.yaml`;

/** The setup hook as a release ships it (every release ships the same script). */
export function readSetupScript(release: string = RELEASES.faulty, dir = PLATFORM_REPO_DIR): string {
    return fs.readFileSync(path.join(dir, "releases", release, "code", "setup.sh"), "utf8");
}

/** The repository's first commit: every file under gitrepo/tenants (repository path -> content). */
export function platformRepoFiles(dir = PLATFORM_REPO_DIR): Record<string, string> {
    const files: Record<string, string> = {};
    const walk = (rel: string) => {
        for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
            const p = rel ? `${rel}/${e.name}` : e.name;
            if (e.isDirectory()) walk(p);
            else files[p] = fs.readFileSync(path.join(dir, p), "utf8");
        }
    };
    walk("");
    return files;
}

/**
 * Each tenant's own settings (tenant data, made by the lab's build in the tenant's namespace, not
 * by Argo CD). mandant-a already holds the news extension's keys; the others do not.
 */
export function tenantSettings(tenant: Tenant): {
    metadata: { name: string; namespace: string; labels: Record<string, string> };
    data: Record<string, string>;
} {
    const base = `site.name = ${tenant}\nsite.locale = de_DE\n`;
    const news = tenant === "mandant-a" ? `news.items_per_page = 25\nnews.archive = off\n` : "";
    return {
        metadata: {
            name: TENANT_SETTINGS,
            namespace: tenant,
            labels: { "app.kubernetes.io/part-of": "tenants-lab", [TENANT_LABEL]: tenant },
        },
        data: { tenant, "settings.ini": base + news },
    };
}
