/**
 * The tenants lab through its dynamic provider as the engine runs it (serialized, revived in a
 * separate Node process) against the simulated cluster: create through step 3, the outputs equal
 * the files, a lower tenantsSolveThrough refused, then delete leaves nothing of the lab.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { tenantsLabProvider } from "../components/tenantsLab";
import { tenantsLayout } from "../lab/tenants/layout";
import { TENANTS_RESULT_FILES } from "../lab/tenants/results";
import { SimulatedLab, SIM_TENANTS_TIMEOUTS, startSimulatedLab } from "../sim/simulatedLab";
import { ProviderPlugin, serializeProvider, startProviderPlugin } from "./helpers/providerProcess";

describe("the tenants lab through its dynamic provider, run as the engine runs it (simulated cluster)", function () {
    this.timeout(300_000);
    let lab: SimulatedLab;
    let text: string;
    let inputs: any;
    let outs: any;
    let output: string;

    let plugin: ProviderPlugin;
    before(async () => {
        plugin = startProviderPlugin();
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "tenants-e2e-"));
        lab = await startSimulatedLab(root);
        text = await serializeProvider(tenantsLabProvider);
        // the simulated node's registry, as the real node's: the provider's process pushes the release images there
        inputs = {
            kubeconfig: lab.kubeconfig,
            imageRegistry: lab.url,
            root,
            solveThrough: 3,
            timeouts: SIM_TENANTS_TIMEOUTS,
            deleteTimeoutSeconds: 30,
        };
        const r = await plugin.call(text, "create", [inputs], 240_000);
        assert.ok(r.ok, `${r.error}\n${r.output}`);
        outs = r.result.outs;
        output = r.output;
    });
    after(async () => {
        await plugin?.stop();
        await lab?.stop();
    });

    it("create builds and solves the lab, prints its progress, and returns stall and recovery as outputs equal to the files", () => {
        const layout = tenantsLayout(inputs.root);
        assert.deepStrictEqual(outs.stall, JSON.parse(fs.readFileSync(layout.resultFile("stall"), "utf8")));
        assert.deepStrictEqual(outs.recovery, JSON.parse(fs.readFileSync(layout.resultFile("recovery"), "utf8")));
        assert.strictEqual(outs.completedThrough, 3);
        assert.strictEqual(outs.stall.blocking, "mandant-b");
        for (const l of [
            "[tenants 1 rollout] waiting for the first rollout",
            "[tenants 2 stall] waiting for the rollout doctor",
            "[tenants 3 recovery] waiting for the rollout of 1.2.1",
        ])
            assert.ok(output.includes(l), l);
    });

    it("diff: nothing changed runs nothing, a new kubeconfig runs it again (delete must reach that cluster), a new root replaces it", async () => {
        const diff = async (news: any) => {
            const r = await plugin.call(text, "diff", ["/x", outs, news]);
            assert.ok(r.ok, r.error);
            return r.result;
        };
        assert.strictEqual((await diff(inputs)).changes, false);
        assert.deepStrictEqual(await diff({ ...inputs, kubeconfig: `${inputs.kubeconfig}\n` }), {
            changes: true,
            replaces: [],
            deleteBeforeReplace: true,
        });
        assert.deepStrictEqual((await diff({ ...inputs, root: `${inputs.root}-moved` })).replaces, ["root"]);
    });

    it("update refuses a lower tenantsSolveThrough and says what to do", async () => {
        const r = await plugin.call(text, "update", ["/x", outs, { ...inputs, solveThrough: 2 }]);
        assert.strictEqual(r.ok, false);
        assert.match(r.error!, /tenantsSolveThrough went down from 3 to 2.*pulumi config set tenantsSolveThrough 3/s);
    });

    it("delete removes the results, the ApplicationSet with its Applications and the tenants' namespaces, and the repository", async () => {
        const r = await plugin.call(text, "delete", ["/x", outs], 120_000);
        assert.ok(r.ok, `${r.error}\n${r.output}`);
        const layout = tenantsLayout(inputs.root);
        for (const f of TENANTS_RESULT_FILES) assert.ok(!fs.existsSync(layout.resultFile(f)), f);
        assert.strictEqual(lab.kube.get("ApplicationSet", "argocd", "tenants"), undefined);
        assert.deepStrictEqual(lab.kube.list("Application"), []);
        assert.deepStrictEqual(
            lab.kube
                .list("Namespace")
                .map((n) => n.metadata.name)
                .filter((n) => n.startsWith("mandant-")),
            [],
        );
        assert.ok(!fs.existsSync(layout.bareRepo) && !fs.existsSync(layout.clone) && !fs.existsSync(layout.appsetFile));
    });
});
