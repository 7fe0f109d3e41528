/**
 * The platform repository of the tenants lab, as files: one tenant file per tenant (the git files
 * generator's input) and one kustomize directory per release. Every release holds:
 * - the site's code as a ConfigMap (`site-code`, a PreSync hook in wave -1, so it exists before the
 *   setup hook mounts it), mounted read-only at /app as a ConfigMap volume always is;
 * - the PreSync hook Job `site-setup` (backoffLimit 2, BeforeHookCreation, the default
 *   terminationMessagePolicy) running setup.sh from the code;
 * - the Deployment `site` (busybox, pinned) serving the release.
 * Release 1.2.0 ships the news extension's settings template; 1.1.0 and 1.2.1 do not.
 */
import { toYaml } from "../ports/files";
import { RELEASES, Tenant, TENANT_LABEL, TENANTS } from "./layout";

/** The image of the site and the hook (pinned; the hook script is POSIX sh). */
export const SITE_IMAGE = "busybox:1.37.0";
export const RELEASE_LABEL = "example.org/release";
/** The line the hook's failure ends with: the error the report quotes. */
export const HOOK_ERROR = "config/system/settings.php is not writable.";

/**
 * The setup hook. For each extension settings template the release ships, it writes the
 * extension's defaults into config/system/settings.php, unless the tenant's own settings already
 * hold the extension's keys. The code is read-only, so a tenant without those keys fails, with
 * the product's error text, until the Job's backoff limit.
 */
export const SETUP_SCRIPT = `#!/bin/sh
# site-setup: runs before every rollout of a tenant's site (Argo CD PreSync hook).
CODE="\${SITE_CODE_DIR:-/app}"
SETTINGS="\${SITE_SETTINGS_DIR:-/settings}"
echo "site-setup: release $(cat "$CODE/VERSION") for tenant $(cat "$SETTINGS/tenant")"
for template in "$CODE"/*.settings-template; do
  [ -e "$template" ] || continue
  ext=$(basename "$template" .settings-template)
  if grep -q "^$ext\\." "$SETTINGS/settings.ini"; then
    echo "extension $ext: the tenant's settings hold its keys; nothing to install"
    continue
  fi
  echo "extension $ext: installing its default settings into config/system/settings.php"
  if ! { mkdir -p "$CODE/config/system" && cat "$template" >> "$CODE/config/system/settings.php"; } 2>/dev/null; then
    echo ""
    echo "In ConfigurationManager.php line 387:"
    echo ""
    echo "  ${HOOK_ERROR}"
    echo ""
    exit 1
  fi
done
echo "site-setup: done"
`;

/** The news extension's settings template (1.2.0 only). */
const NEWS_TEMPLATE = `news.items_per_page = 10
news.archive = on
`;

export function tenantFile(tenant: Tenant, release: string): string {
    return `tenant: ${tenant}\nrelease: "${release}"\n`;
}

export const tenantPath = (tenant: Tenant) => `tenants/${tenant}.yaml`;

function releaseFiles(release: string, withTemplate: boolean): Record<string, string> {
    const dir = `releases/${release}`;
    const code: Record<string, string> = {
        VERSION: `${release}\n`,
        "setup.sh": SETUP_SCRIPT,
        "index.html": `<h1>site ${release}</h1>\n`,
        ...(withTemplate ? { "news.settings-template": NEWS_TEMPLATE } : {}),
    };
    const labels = { "app.kubernetes.io/name": "site", [RELEASE_LABEL]: release };
    const codeVolume = { name: "code", configMap: { name: "site-code" } };
    const settingsVolume = { name: "settings", configMap: { name: "site-settings" } };
    const mounts = [
        { name: "code", mountPath: "/app", readOnly: true },
        { name: "settings", mountPath: "/settings", readOnly: true },
    ];
    const kustomization = {
        apiVersion: "kustomize.config.k8s.io/v1beta1",
        kind: "Kustomization",
        resources: ["deployment.yaml", "setup-job.yaml"],
        configMapGenerator: [{ name: "site-code", files: Object.keys(code).map((f) => `code/${f}`) }],
        generatorOptions: {
            // the code must exist before the setup hook mounts it: a PreSync hook itself, one wave earlier
            annotations: { "argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "-1", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation" },
        },
    };
    const deployment = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "site", labels },
        spec: {
            replicas: 1,
            selector: { matchLabels: { "app.kubernetes.io/name": "site" } },
            template: {
                metadata: { labels },
                spec: {
                    containers: [
                        {
                            name: "site",
                            image: SITE_IMAGE,
                            command: ["/bin/sh", "-c", 'echo "site release $(cat /app/VERSION)"; exec httpd -f -p 8080 -h /app'],
                            env: [{ name: "SITE_RELEASE", value: release }],
                            ports: [{ containerPort: 8080 }],
                            volumeMounts: mounts,
                        },
                    ],
                    volumes: [codeVolume, settingsVolume],
                },
            },
        },
    };
    const job = {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: {
            name: "site-setup",
            labels,
            annotations: { "argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation" },
        },
        spec: {
            backoffLimit: 2,
            template: {
                metadata: { labels },
                spec: {
                    restartPolicy: "Never",
                    containers: [
                        {
                            name: "setup",
                            image: SITE_IMAGE,
                            command: ["/bin/sh", "/app/setup.sh"],
                            // where setup.sh finds the mounts (its defaults; named so the simulation can map them)
                            env: [
                                { name: "SITE_CODE_DIR", value: "/app" },
                                { name: "SITE_SETTINGS_DIR", value: "/settings" },
                            ],
                            volumeMounts: mounts,
                        },
                    ],
                    volumes: [codeVolume, settingsVolume],
                },
            },
        },
    };
    const files: Record<string, string> = {
        [`${dir}/kustomization.yaml`]: toYaml(kustomization),
        [`${dir}/deployment.yaml`]: toYaml(deployment),
        [`${dir}/setup-job.yaml`]: toYaml(job),
    };
    for (const [f, content] of Object.entries(code)) files[`${dir}/code/${f}`] = content;
    return files;
}

/** The repository's first commit: every tenant at the first release, and all three releases. */
export function platformRepoFiles(): Record<string, string> {
    const files: Record<string, string> = {
        "README.md": `# platform\n\nOne file per tenant in tenants/ (tenant, release); one kustomize directory per release in releases/.\nThe ApplicationSet \`tenants\` rolls a release out one tenant at a time (RollingSync, label ${TENANT_LABEL}).\n`,
    };
    for (const t of TENANTS) files[tenantPath(t)] = tenantFile(t, RELEASES.first);
    Object.assign(files, releaseFiles(RELEASES.first, false), releaseFiles(RELEASES.faulty, true), releaseFiles(RELEASES.fixed, false));
    return files;
}

/**
 * Each tenant's own settings (tenant data, made by the lab's build in the tenant's namespace, not
 * by Argo CD). mandant-a already holds the news extension's keys; the others do not.
 */
export function tenantSettings(tenant: Tenant): { metadata: { name: string; namespace: string; labels: Record<string, string> }; data: Record<string, string> } {
    const base = `site.name = ${tenant}\nsite.locale = de_DE\n`;
    const news = tenant === "mandant-a" ? `news.items_per_page = 25\nnews.archive = off\n` : "";
    return {
        metadata: { name: "site-settings", namespace: tenant, labels: { "app.kubernetes.io/part-of": "tenants-lab", [TENANT_LABEL]: tenant } },
        data: { tenant, "settings.ini": base + news },
    };
}
