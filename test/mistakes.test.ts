/**
 * Mistakes a learner or a lab author makes at the command line, each with the answer it gets: one
 * line, what was wrong and what to do, the exit code a script reads (2 for usage, 1 for a failure),
 * never a stack trace. A table, as upstream's tests of options are; each row runs in this process.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { whyNot } from "../lab/grader/resultFiles";
import type { SchemaField } from "../lab/ports/schema";
import { shopFieldsOf } from "../lab/shop/results";
import { tenantsFieldsOf } from "../lab/tenants/results";
import { spawnSync } from "child_process";
import { BIN, runMain } from "./helpers/cli";
import { rootAt } from "./helpers/labAt";

/** Who makes it, the command and its arguments ({dir}: a folder of the test's own), the exit code, the answer. */
type Mistake = [who: "learner" | "author", command: string, args: string[], code: number, answer: RegExp];

const DUMP =
    /make it with kubectl get applicationsets\.argoproj\.io,applications\.argoproj\.io,appprojects\.argoproj\.io,jobs,pods -A -o json/;

const MISTAKES: Mistake[] = [
    ["learner", "simulate", ["--root", "{dir}/r", "--through", "-1"], 2, /--through takes a whole number from 0 to 8, got "-1"/],
    ["learner", "simulate", ["--root", "{dir}/r", "--through", "3.5"], 2, /--through takes a whole number from 0 to 8, got "3\.5"/],
    ["learner", "simulate", ["--root", "{dir}/r", "--lab", "shopp"], 2, /--lab takes shop, tenants or both, got "shopp"/],
    ["learner", "simulate", ["--root", "{dir}/r", "--lab", "shop", "--tenants-through", "2"], 2, /--tenants-through goes with --lab both/],
    ["learner", "simulate", ["--root", "{dir}/r", "--reset", "--serve"], 2, /--reset goes alone \(with --root\)/],
    ["author", "simulate", ["--root", "{dir}/r", "--reset", "--argocd-version", "v3.5.1"], 2, /--reset goes alone \(with --root\)/],
    ["learner", "simulate", ["--root", "{dir}/r", "--reset", "--realistic"], 2, /--reset goes alone \(with --root\)/],
    [
        "author",
        "simulate",
        ["--root", "{dir}/r", "--argocd-version", "3.6.2"],
        2,
        /--argocd-version takes v3\.6\.2, v3\.5\.8, v3\.5\.1, got "3\.6\.2"/,
    ],
    ["author", "simulate", ["--root", "{dir}/r", "--cluster", "kind"], 2, /--cluster takes sim or real, got "kind"/],
    ["learner", "simulate", ["--root"], 2, /Option '--root <value>' argument missing \(see gitops-lab simulate --help\)/],
    ["learner", "simulate", ["--root", "{dir}/r", "--rot", "x"], 2, /Unknown option '--rot'; did you mean --root\?/],
    ["learner", "simulate", ["--root", "{dir}/r", "--thru", "3"], 2, /Unknown option '--thru'; did you mean --through\?/],
    ["learner", "verify", ["{dir}/r"], 2, /Unexpected argument '[^']+'\. [^;]*; the lab's root is given: --root \S+/],
    ["learner", "doctor", ["tenants"], 2, /Unexpected argument 'tenants'\. [^;]*; to look at one ApplicationSet: --appset tenants/],
    [
        "learner",
        "simulate",
        ["--root", "{dir}/r", "--lab", "tenants", "--through", "4"],
        2,
        /--through takes a whole number from 1 to 3, got "4"/,
    ],
    ["learner", "simulate", ["--through", "2"], 2, /--root DIR is required/],
    ["learner", "simulate", ["--root", "/"], 2, /--root \/ is this host's own lab location/],
    [
        "learner",
        "simulate",
        ["--root", "{dir}/x/root/cnpa-env", "--through", "0"],
        2,
        /--root \S+\/x\/root\/cnpa-env ends with root\/cnpa-env, a folder the lab makes under its root, so the lab would go under \S+\/x\/root\/cnpa-env\/root\/cnpa-env: --root names the folder above the lab's paths \(such as --root \S+\/x, or a new folder\)$/m,
    ],
    [
        "learner",
        "simulate",
        ["--root", "{dir}", "--through", "1"],
        2,
        /--root \S+ holds no lab itself, but labs are under it \(\S+\/outer, \S+\/savedlab\): to go on with one, give it as --root; for a new lab, give a new folder$/m,
    ],
    [
        "learner",
        "simulate",
        ["--root", "file:///tmp/lab", "--through", "1"],
        2,
        /--root file:\/\/\/tmp\/lab is a URL; --root takes a folder's path: --root \/tmp\/lab$/m,
    ],
    [
        "learner",
        "simulate",
        ["--root", "{dir}/outer/root/cnpa-env", "--through", "0"],
        2,
        /--root \S+\/outer\/root\/cnpa-env is inside the simulated lab under \S+\/outer: a lab is not built inside another; to go on with that one, give --root \S+\/outer/,
    ],
    [
        "learner",
        "simulate",
        ["--root", "{dir}/outer/root", "--reset"],
        2,
        /--root \S+\/outer\/root is inside the simulated lab under (\S+\/outer), which is reset as a whole: gitops-lab simulate --root \1 --reset$/m,
    ],
    ["learner", "simulat", ["--root", "{dir}/r"], 2, /unknown command "simulat"; did you mean "simulate"\?/],
    [
        "learner",
        "simulate",
        ["\u2013-root", "{dir}/r", "--through", "0"],
        2,
        /'\u2013-root' starts with a typographic dash \(U\+2013, copied from a document\?\), not --: type it as --root/,
    ],
    [
        "learner",
        "simulate",
        ["\u2014root", "{dir}/r"],
        2,
        /'\u2014root' starts with an em dash \(U\+2014, copied from a document\?\), not --: type it as --root/,
    ],
    [
        "author",
        "preflight",
        ["Pulumi.dev.yaml"],
        2,
        /Unexpected argument 'Pulumi\.dev\.yaml'\. [^;]*; a file is given: --config-file Pulumi\.dev\.yaml/,
    ],
    ["author", "doctor", ["dump.json"], 2, /; a file is given: --from dump\.json/],
    [
        "learner",
        "verify",
        ["pin.json"],
        2,
        /: verify reads the result files where the lab keeps them: give the lab's folder, --root DIR \(not a file\)/,
    ],
    ["author", "doctor", ["-o", "json"], 2, /Unknown option '-o': the doctor prints its findings as JSON with --json/],
    [
        "author",
        "doctor",
        ["--root", "{dir}/r"],
        2,
        /Unknown option '--root': the doctor reads a cluster, not a lab's folder: a served simulated lab's is --kubeconfig DIR\/kubeconfig/,
    ],
    [
        "learner",
        "simulate",
        ["--root", ""],
        2,
        /--root was given an empty value \(an unset variable\?\): give one, e\.g\. --root \/tmp\/lab/,
    ],
    [
        "learner",
        "verify",
        ["--lab", "tenants", "--offline", "--argocd-version", "v3.5.1"],
        2,
        /Unknown option '--argocd-version': verify grades the lab as its cluster stands, whichever Argo CD runs it: leave it out; it is simulate's/,
    ],
    [
        "author",
        "doctor",
        ["--argocd-version", "v3.5.1"],
        2,
        /Unknown option '--argocd-version': the doctor reads whichever Argo CD the cluster runs/,
    ],
    [
        "learner",
        "verify",
        ["--root", "{dir}/r ", "--offline"],
        2,
        /--root "\S+\/r " has a space at its end \(copied with it\?\), which would name another folder than "\S+\/r": give it without/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/nbsp.yaml"],
        1,
        /nbsp\.yaml line 3, column 27: a non-breaking space \(U\+00A0, copied from a web page\?\), which YAML does not read as a space/,
    ],
    // the lab's appset.yaml given for the stack's file
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/appset.yaml"],
        1,
        /appset\.yaml is a Kubernetes manifest \(kind: ApplicationSet\), not a stack configuration: give a stack's file like Pulumi\.dev\.yaml/,
    ],
    // the lab's appset.yaml (a manifest as written, no status) given for a dump
    [
        "learner",
        "doctor",
        ["--from", "{dir}/appset.yaml"],
        1,
        /appset\.yaml is a manifest \(kind: ApplicationSet, as written, with no status\), not a dump of the cluster: the doctor reads what the cluster holds; leave --from out/,
    ],
    // the shop lab's drift.json (no commit in it) given for a dump
    ["learner", "doctor", ["--from", "{dir}/drift.json"], 1, /drift\.json is a lab's result file \(what a step wrote/],
    // the tenants lab's stall.json given for a dump
    [
        "learner",
        "doctor",
        ["--from", "{dir}/stall.json"],
        1,
        /stall\.json is a lab's result file \(what a step wrote: a commit and what was seen\), not a dump of the cluster: read the cluster live \(leave --from out\), or make it with kubectl get /,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/cap-config.yaml"],
        1,
        /cap-config\.yaml: Config: is not Pulumi's key, which is config: in lower case/,
    ],
    [
        "author",
        "doctor",
        ["--from", "{dir}/names.txt"],
        1,
        /names\.txt is kubectl's -o name list \(3 names, no objects\): make it with kubectl get /,
    ],
    [
        "author",
        "doctor",
        ["--from", "{dir}/items.json"],
        1,
        /items\.json holds a JSON array \(the List's items alone, as jq \.items writes\)/,
    ],
    [
        "author",
        "doctor",
        ["--from", "{dir}/slurped.json"],
        1,
        /slurped\.json holds a JSON array of 2 Lists \(as jq -s writes\), not one List: make one dump with one kubectl get of every kind \(kubectl get applicationsets\.argoproj\.io,[^)]*\), or join their items into one: jq '\{apiVersion: "v1", kind: "List", items: \(map\(\.items\) \| add\)\}' slurped\.json$/m,
    ],
    [
        "author",
        "doctor",
        ["--from", "{dir}/doctor-out.json"],
        1,
        /doctor-out\.json is the doctor's own --json output \(its findings\), not a dump/,
    ],
    ["author", "doctor", ["--from", "{dir}/kc.yaml"], 1, /kc\.yaml is a kubeconfig: it goes with --kubeconfig \(or leave --from out/],
    // a dump at a URL: a file is what --from reads
    [
        "author",
        "doctor",
        ["--from", "http://127.0.0.1:1/bundle.json"],
        1,
        /--from takes a file, not a URL \(http:\/\/127\.0\.0\.1:1\/bundle\.json\): download it first \(curl -fsSo dump\.json 'http:\/\/127\.0\.0\.1:1\/bundle\.json'\), then --from dump\.json/,
    ],
    // a simulated lab's saved cluster taken for a dump
    [
        "learner",
        "doctor",
        ["--from", "{dir}/savedlab/simulated-cluster.json"],
        1,
        /simulated-cluster\.json is a simulated lab's saved cluster \(simulate keeps its state there\), not a dump: read the lab live while simulate --serve serves it \(--kubeconfig \S+\/savedlab\/kubeconfig\)/,
    ],
    [
        "learner",
        "simulate",
        ["--root", "$HOME/lab"],
        2,
        /--root \$HOME\/lab: the \$HOME came here as written \(in single quotes, the shell does not expand it\)/,
    ],
    [
        "learner",
        "serve",
        ["--root", "{dir}/r"],
        2,
        /unknown command "serve"; to serve a simulated lab for kubectl and git: gitops-lab simulate --root DIR --serve/,
    ],
    ["learner", "help", ["reset"], 2, /no help for "reset": no such command; to take a lab down: gitops-lab simulate --root DIR --reset/],
    ["learner", "simulate", ["--root", "{dir}/r", "--tenants"], 2, /Unknown option '--tenants': the lab is chosen with --lab tenants/],
    [
        "learner",
        "simulate",
        ["--root", "{dir}/r", "--step", "3"],
        2,
        /Unknown option '--step': simulate solves the steps through N with --through N/,
    ],
    [
        "author",
        "outputs",
        ["argocdAdminPassword"],
        2,
        /outputs prints every output as one JSON object \(no name is taken\): gitops-lab outputs \| jq -r \.argocdAdminPassword \(a secret one needs --show-secrets\)/,
    ],
    [
        "author",
        "doctor",
        ["--from", "{dir}/stderr-too.json"],
        1,
        /stderr-too\.json starts with text before the JSON \("Warning: short name \\"app\\" is ambiguous": kubectl's stderr, written with 2>&1\?\): make it with stdout alone/,
    ],
    [
        "author",
        "doctor",
        ["--from", "{dir}/dump.json.gz"],
        1,
        /dump\.json\.gz is gzip-compressed: the doctor reads the JSON itself; gunzip -k \S+dump\.json\.gz/,
    ],
    ["learner", "verify", ["help"], 2, /Unexpected argument 'help'\. [^;]*; for verify's options: gitops-lab verify --help$/m],
    ["learner", "help", ["verfy"], 2, /no help for "verfy": no such command; did you mean gitops-lab help verify\?/],
    [
        "learner",
        "outputs",
        ["--root", "{dir}/r"],
        2,
        /a simulated lab has no stack: its results are the JSON files under DIR\/root\/cnpa-env .* verify --root DIR --offline/,
    ],
    ["learner", "simulate", ["--root", "~/lab"], 2, /--root ~\/lab: the ~ came here as written \(quoted, the shell does not expand it\)/],
    ["learner", "verify", ["--root", "{dir}/none", "--step", "9"], 2, /--step takes a whole number from 1 to 8, got "9"/],
    [
        "learner",
        "verify",
        ["--root", "{dir}/none", "--lab", "tenants", "--step", "4"],
        2,
        /--step takes a whole number from 1 to 3, got "4"/,
    ],
    ["learner", "verify", ["--root", "{dir}/none", "--through", "abc"], 2, /--through takes a whole number from 0 to 8, got "abc"/],
    [
        "learner",
        "verify",
        ["--root", "{dir}/none", "--step", "2", "--through", "3"],
        2,
        /--through and --step do not go together: choose one/,
    ],
    ["learner", "verify", ["--lab", "shopping"], 2, /--lab takes shop or tenants, got "shopping"/],
    [
        "learner",
        "verify",
        ["--lab", "both"],
        2,
        /--lab takes shop or tenants, got "both": verify grades one lab at a time \(--lab shop, then --lab tenants\)/,
    ],
    [
        "learner",
        "verify",
        ["--root", "{dir}/none", "--stack-outputs", "{dir}/outputs.json"],
        2,
        /--stack-outputs \S+outputs\.json does not exist; make it with pulumi stack output --json > \S+outputs\.json/,
    ],
    [
        "learner",
        "doctor",
        ["--from", "{dir}/dump.yaml"],
        1,
        new RegExp(`dump\\.yaml is YAML \\(kubectl -o yaml\\): the doctor reads -o json; ${DUMP.source}`),
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/minutes.yaml"],
        1,
        /gitops-lab:syncTimeoutSeconds is "5m"; allowed: .*; for 5m write 300/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/tilde.yaml"],
        1,
        /gitops-lab:kubeconfigPath is "~\/\.kube\/config"; allowed: .*; ~ is not expanded here: write the whole path \(\/\S+\/\.kube\/config\)/,
    ],
    [
        "learner",
        "verify",
        ["--root", "{dir}/none", "--offline"],
        1,
        /there is no shop lab under \S+none .*build it with gitops-lab simulate --root/,
    ],
    ["learner", "verify", ["--root", "{dir}/none", "--offl"], 2, /Unknown option '--offl'; did you mean --offline\?/],
    ["learner", "verify", ["--root", "{dir}/none", "--lab", "tenants", "--offline"], 1, /there is no tenants lab under \S+none/],
    ["author", "doctor", ["--interval", "5"], 2, /--interval goes with --watch/],
    ["author", "doctor", ["--metrics-port", "5000"], 2, /--metrics-port goes with --watch/],
    ["author", "doctor", ["--watch", "--metrics-port", "70000"], 2, /--metrics-port takes a whole number from 0 to 65535, got "70000"/],
    ["author", "doctor", ["--stuck-after", "-1"], 2, /--stuck-after takes a number of seconds >= 0, got "-1"$/],
    ["author", "doctor", ["--stuck-after", "10m"], 2, /--stuck-after takes a number of seconds >= 0, got "10m"; for 10m write 600$/],
    ["learner", "doctor", ["--from", "{dir}"], 1, /cannot read \S+ \(it is a folder\): give the file of a dump; .* > \S+\/dump\.json$/],
    ["learner", "doctor", ["--from", "{dir}/missing.json"], 1, /cannot read \S+missing\.json \(no such file\): give the file of a dump/],
    ["learner", "doctor", ["--from", "{dir}/object.json"], 1, /the dump is not a Kubernetes List/],
    [
        "learner",
        "doctor",
        ["--from", "{dir}/empty-list.json"],
        1,
        /holds no ApplicationSets and no Applications \(a dump of another context or namespace\?\)/,
    ],
    [
        "learner",
        "doctor",
        ["--from", "{dir}/apps-only.json"],
        1,
        /apps-only\.json holds 1 Application made by an ApplicationSet but no ApplicationSets: a dump of some kinds only/,
    ],
    [
        "learner",
        "doctor",
        ["--from", "{dir}/appsets-only.json"],
        1,
        /appsets-only\.json holds ApplicationSets but none of their Applications/,
    ],
    [
        "learner",
        "doctor",
        ["--watch", "--from", "{dir}/appsets-only.json"],
        1,
        /appsets-only\.json holds ApplicationSets but none of their Applications/,
    ],
    ["learner", "doctor", ["--from", "{dir}/text.txt"], 1, new RegExp(`text\\.txt is not JSON .*${DUMP.source}`)],
    [
        "learner",
        "doctor",
        ["--from", "{dir}/events.json"],
        1,
        new RegExp(`events\\.json holds only 2 Events, 1 Pod, none of Argo CD's ApplicationSets or Applications; ${DUMP.source}`),
    ],
    [
        "learner",
        "doctor",
        ["--from", "{dir}/cut.json"],
        1,
        /cut\.json is not JSON \(it stops mid-JSON at line 3, as a file cut short does \(an interrupted copy or command\): make it again\)/,
    ],
    ["learner", "doctor", ["--from", "{dir}/bom.json"], 1, /is not JSON \(it starts with a byte-order mark/],
    [
        "learner",
        "doctor",
        ["--from", "{dir}/empty.json"],
        1,
        /empty\.json is empty \(did the kubectl that wrote it fail\? its error is where it ran\)/,
    ],
    [
        "learner",
        "doctor",
        ["--from", "{dir}/lines.json"],
        1,
        /lines\.json is not JSON \(it holds 2 JSON values, one a line \(JSON Lines, as jq -c '\.items\[\]' writes\)/,
    ],
    [
        "learner",
        "doctor",
        ["--from", "{dir}/nostatus.json"],
        1,
        /nostatus\.json holds no status on any object \(taken out to share it\?\): the doctor reads the statuses Argo CD writes/,
    ],
    [
        "learner",
        "doctor",
        ["--from", "{dir}/twice.json"],
        1,
        /twice\.json is not JSON \(it holds a second JSON value after a whole first one, the second beginning at line 4 \(written twice, appended with >>\?\): make it again, written once with >\)/,
    ],
    ["learner", "doctor", ["--from", "{dir}/utf16.json"], 1, /utf16\.json holds no ApplicationSets and no Applications/],
    [
        "author",
        "doctor",
        ["--from", "{dir}/huge.json"],
        1,
        /huge\.json holds more than 500 MB, more than the doctor reads at once: run it live instead \(--kubeconfig FILE\)/,
    ],
    [
        "learner",
        "doctor",
        ["--kubeconfig", "{dir}/missing-kubeconfig"],
        1,
        /no kubeconfig found \(looked at \S+missing-kubeconfig\); pass --kubeconfig FILE/,
    ],
    [
        "learner",
        "doctor",
        ["--kubeconfig", "{dir}"],
        1,
        /the kubeconfig \S+ is a folder: give the kubeconfig file \(a simulated lab's is DIR\/kubeconfig\)/,
    ],
    [
        "learner",
        "doctor",
        ["--kubeconfig", "{dir}/through9.yaml"],
        1,
        /through9\.yaml is not a kubeconfig \(it names no cluster and no current context\): give the cluster's kubeconfig/,
    ],
    [
        "author",
        "doctor",
        ["-n", "argocd"],
        2,
        /Unknown option '-n': the doctor reads every namespace; to look at one ApplicationSet, --appset NAMESPACE\/NAME/,
    ],
    [
        "learner",
        "doctor",
        ["--lab", "tenants"],
        2,
        /Unknown option '--lab': the doctor reads every ApplicationSet in the cluster, whichever lab made it: leave it out; to look at one, --appset NAME \(the tenants lab's is tenants\)/,
    ],
    ["learner", "doctor", ["--step", "2"], 2, /Unknown option '--step': the doctor finds the stuck step itself: leave it out/],
    [
        "author",
        "doctor",
        ["--context", "prod"],
        2,
        /Unknown option '--context': the doctor reads the kubeconfig's current context: kubectl config use-context NAME first/,
    ],
    [
        "learner",
        "doctor",
        ["--kubeconfig", "{dir}/no-current.yaml"],
        1,
        /no-current\.yaml has no current-context naming one of its contexts \(lab\): kubectl --kubeconfig \S+ config use-context NAME/,
    ],
    ["learner", "doctor", ["--json", "--from"], 2, /Option '--from <value>' argument missing/],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/missing.yaml"],
        2,
        /--config-file \S+missing\.yaml does not exist \(looked at \S+missing\.yaml\); give a stack configuration file/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "-"],
        2,
        /^gitops-lab preflight: --config-file - \(standard input\) is not read: the stack's file is read more than once, which a pipe allows once; save it to a file/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/through9.yaml"],
        1,
        /gitops-lab:solveThrough is "9"; allowed: a whole number from 0 to 8/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/argocd34.yaml"],
        1,
        /gitops-lab:argocdVersion is "v3\.4\.0"; allowed: one of v3\.6\.2, v3\.5\.8, v3\.5\.1/,
    ],
    ["author", "preflight", ["--config-file", "{dir}/broken.yaml"], 1, /broken\.yaml line 2, column \d+: .*; fix the YAML there/],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/two.json"],
        1,
        /two\.json line 2, column 1: something follows the file's first value, which had ended there .*the file holds one mapping/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/Pulumi.yaml"],
        1,
        /Pulumi\.yaml is a Pulumi project file \(name: "gitops-lab", runtime:\), not a stack configuration: give a stack's file like Pulumi\.dev\.yaml/,
    ],
    ["author", "preflight", ["--config-file", "{dir}/typo-key.yaml"], 1, /gitops-lab:solveThru is not a key of this lab; the keys are /],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/latin1.yaml"],
        1,
        /latin1\.yaml line 2: bytes that are no UTF-8 \(0xDC: saved as Latin-1 or Windows-1252\?\), and YAML here is UTF-8: save it as UTF-8 \(iconv -f LATIN1 -t UTF-8\)$/m,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/assigned.yaml"],
        1,
        /assigned\.yaml: gitops-lab:solveThrough=3 is written KEY=VALUE, which YAML does not read as a key; in the file write gitops-lab:solveThrough: 3$/m,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/assigned-second.yaml"],
        1,
        /assigned-second\.yaml line 3, column 3: gitops-lab:solveThrough=3 is written KEY=VALUE, which YAML does not read as a key; in the file write gitops-lab:solveThrough: 3$/m,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/foreign-prefix.yaml"],
        1,
        /foreign-prefix\.yaml: cnpa-lab:tenantsLab is this lab's key tenantsLab under another project's prefix \(cnpa-lab:\), which Pulumi never gives to this project: write gitops-lab:tenantsLab$/m,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/glued-colon.yaml"],
        1,
        /glued-colon\.yaml line 3, column 3: gitops-lab:solveThrough:3 has no space after the colon, so YAML reads no value; write gitops-lab:solveThrough: 3/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/typo-prefix.yaml"],
        1,
        /gitops_lab:solveThrough: gitops_lab: is not this project's prefix; write gitops-lab:solveThrough/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/top-level.yaml"],
        1,
        /gitops-lab:solveThrough is at the top level, .*put it under config:/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/image-space.yaml"],
        1,
        /gitops-lab:gitDaemonImage is "buildpack-deps:bookworm scm"; allowed: an image reference/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/image-upper.yaml"],
        1,
        /gitops-lab:gitDaemonImage is "MyOrg\/git"; allowed: an image reference/,
    ],
    ["author", "preflight", ["--config-file", "{dir}/twice-secret.yaml"], 1, /gitops-lab:kubeconfigPath is given twice/],
    ["author", "preflight", ["--config-file", "{dir}/list.yaml"], 1, /list\.yaml holds a list, not a stack configuration/],
    ["author", "preflight", ["--config-file", "{dir}/config-list.yaml"], 1, /config: holds a list; it is a mapping of gitops-lab:<key>/],
    ["author", "preflight", ["--config-file", "{dir}/secret-typo.yaml"], 1, /gitops-lab:solveThruogh is not a key of this lab/],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/twice.yaml"],
        1,
        /gitops-lab:solveThrough is given twice \(as solveThrough and gitops-lab:solveThrough\): keep one/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/registry-password.yaml"],
        1,
        /^(?!.*hunter2).*gitops-lab:imageRegistry is "http:\/\/\*\*\*@10\.0\.0\.5:5000".*no user, token or password in the registry's URL/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/registry-no-scheme.yaml"],
        1,
        /^(?!.*hunter2)(?!.*ss@).*gitops-lab:imageRegistry is "\*\*\*@10\.0\.0\.5:5000".*no user, token or password/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/stall.json"],
        1,
        /stall\.json is a lab's result file \(what a step wrote: a commit and what was seen\), not a stack configuration/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/kubeconfig"],
        1,
        /\/kubeconfig is a kubeconfig \(kind: Config\), not a stack configuration: to adopt that cluster, set gitops-lab:kubeconfigPath/,
    ],
    [
        "author",
        "preflight",
        ["--config-file", "{dir}/registry-lab-name.yaml"],
        1,
        /gitops-lab:imageRegistry is "http:\/\/registry\.lab\.internal".*registry\.lab\.internal is the name the lab's images carry, which the cluster mirrors from a registry of its own: give that registry's address/,
    ],
    [
        "author",
        "up",
        ["--solve-through", "3"],
        2,
        /solveThrough is a key of the stack's configuration, not an option: pulumi config set solveThrough VALUE/,
    ],
    ["author", "preview", ["--argocd-version", "v3.5.1"], 2, /argocdVersion is a key of the stack's configuration, not an option/],
    ["author", "kubectl-plugin", ["--out", "{dir}/no-such-dir"], 2, /--out \S+no-such-dir is not a directory; create it or name another/],
    [
        "author",
        "kubectl-plugin",
        ["--out", "{dir}/bin"],
        2,
        /\S+\/bin\/kubectl-rollout_doctor is there and is not the plugin gitops-lab writes \(yours\?\): move it away, or give another --out/,
    ],
    [
        "author",
        "kubectl-plugin",
        ["--out", "{dir}/kubectl-rollout-doctor"],
        2,
        /--out \S+\/kubectl-rollout-doctor names a file: --out takes the folder the plugin is written into \(as \S+\/kubectl-rollout_doctor\), one on kubectl's PATH: --out \S+$/,
    ],
    [
        "author",
        "kubectl-plugin",
        ["--out", "{dir}/text.txt"],
        2,
        /--out \S+text\.txt is a file: --out takes the folder the plugin is written into \(as \S+\/kubectl-rollout_doctor\), one on kubectl's PATH: --out \S+mistakes-\w+$/,
    ],
    ["author", "bench", ["--cluster", "kind"], 2, /--cluster takes sim or real, got "kind"/],
    ["author", "bench", ["--cluster", "sim", "--build"], 2, /--build goes with --cluster real/],
    [
        "author",
        "kubectl-plugin",
        ["--out", ""],
        2,
        /--out was given an empty value \(an unset variable\?\): give one, or leave the option out/,
    ],
    ["author", "bench", ["--runs", "3"], 2, /Unknown option '--runs'; did you mean --rounds\?/],
    [
        "learner",
        "--root",
        ["{dir}/r", "simulate"],
        2,
        /--root comes before the command: options go after it \(gitops-lab simulate --root \S+\/r\)/,
    ],
    [
        "learner",
        "doctor",
        ["--watch", "--from", "{dir}/missing.json"],
        1,
        /cannot read \S+missing\.json \(no such file\): give the file of a dump/,
    ],
    ["learner", "doctor", ["--watch", "--from", "-"], 2, /--from - \(standard input\) is read once: --watch needs a file/],
    ["learner", "--versoin", [], 2, /unknown option "--versoin"; did you mean --version\?/],
    ["learner", "simulate", ["--hlep"], 2, /Unknown option '--hlep'; did you mean --help\?/],
    ["learner", "-v", [], 2, /unknown option "-v"; did you mean --version \(or -V\)\?/],
    [
        "learner",
        "simulate",
        ["--root", "{dir}/r", "--stop"],
        2,
        /Unknown option '--stop': a served lab stops with Ctrl-C in its terminal, or kill PID/,
    ],
    [
        "author",
        "preflight",
        ["--lab", "tenants"],
        2,
        /Unknown option '--lab': preflight checks the labs the stack file builds: the tenants lab with gitops-lab:tenantsLab: true/,
    ],
    [
        "author",
        "bench",
        ["--argocd-version", "v3.6.2"],
        2,
        /Unknown option '--argocd-version': bench always measures Argo CD v3\.5\.1 at its defaults/,
    ],
    [
        "author",
        "bench",
        ["--root", "{dir}/r"],
        2,
        /Unknown option '--root': bench builds its lab in a temporary folder of its own and removes it/,
    ],
    [
        "learner",
        "simulate",
        ["--", "--root", "{dir}/r"],
        2,
        /a -- ends the options, so --root \S+\/r after it would be no options: leave the -- out \(it is for npm run/,
    ],
    [
        "learner",
        "simulate",
        ["--root", "{dir}/r", "--through", "2", "--through", "5"],
        2,
        /--through is given 2 times \("2", then "5"\): give it once/,
    ],
];

describe("mistakes at the command line, and their answers", function () {
    this.timeout(60_000);
    let dir: string;
    before(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "mistakes-"));
        fs.chmodSync(dir, 0o755); // a root below it is one the git daemon (as nobody) may serve
        const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, name), text);
        write("object.json", JSON.stringify({ kind: "Pod" }));
        write("empty-list.json", JSON.stringify({ apiVersion: "v1", kind: "List", items: [] }));
        write("text.txt", "NAME   READY\n");
        // a plugin of the user's own at the path kubectl-plugin writes
        fs.mkdirSync(path.join(dir, "bin"));
        write("bin/kubectl-rollout_doctor", "#!/bin/sh\necho mine\n");
        const list = (...items: object[]) => JSON.stringify({ apiVersion: "v1", kind: "List", items });
        write(
            "apps-only.json",
            list({
                apiVersion: "argoproj.io/v1alpha1",
                kind: "Application",
                metadata: { name: "mandant-a", namespace: "argocd", ownerReferences: [{ kind: "ApplicationSet", name: "tenants" }] },
                status: { sync: { status: "Synced" }, health: { status: "Healthy" } },
            }),
        );
        write(
            "appsets-only.json",
            list({
                apiVersion: "argoproj.io/v1alpha1",
                kind: "ApplicationSet",
                metadata: { name: "tenants", namespace: "argocd" },
                status: { applicationStatus: [{ application: "mandant-a", status: "Healthy", step: "1" }] },
            }),
        );
        const event = (name: string) => ({ apiVersion: "v1", kind: "Event", metadata: { name, namespace: "argocd" }, reason: "Synced" });
        write("events.json", list(event("a"), event("b"), { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "argocd" } }));
        write("cut.json", '{\n  "apiVersion": "v1",\n  "kind": "List", "items": [{"kind": "Applic');
        write("empty.json", "");
        write(
            "lines.json",
            '{"kind":"ApplicationSet","metadata":{"name":"tenants","namespace":"argocd"}}\n{"kind":"Application","metadata":{"name":"mandant-a","namespace":"argocd"}}\n',
        );
        write(
            "nostatus.json",
            JSON.stringify({
                kind: "List",
                items: [{ kind: "ApplicationSet", metadata: { name: "tenants", namespace: "argocd" }, spec: {} }],
            }),
        );
        write("twice.json", '{\n  "kind": "List", "items": []\n}\n{\n  "kind": "List", "items": []\n}\n');
        write("bom.json", "\ufeff" + JSON.stringify({ apiVersion: "v1", kind: "List", items: [] }));
        // as PowerShell's > writes it: UTF-16LE with a byte-order mark
        fs.writeFileSync(
            path.join(dir, "utf16.json"),
            Buffer.concat([
                Buffer.from([0xff, 0xfe]),
                Buffer.from(JSON.stringify({ apiVersion: "v1", kind: "List", items: [] }), "utf16le"),
            ]),
        );
        // over what a string holds, sparse (no disk used): refused by its size before it is read
        fs.closeSync(fs.openSync(path.join(dir, "huge.json"), "w"));
        fs.truncateSync(path.join(dir, "huge.json"), 600 * 1024 * 1024);
        write("through9.yaml", 'config:\n  gitops-lab:solveThrough: "9"\n');
        write("argocd34.yaml", "config:\n  gitops-lab:argocdVersion: v3.4.0\n");
        write("broken.yaml", "config: [\n");
        write("dump.yaml", "apiVersion: v1\nitems: []\nkind: List\n");
        write("minutes.yaml", "config:\n  gitops-lab:syncTimeoutSeconds: 5m\n");
        write("tilde.yaml", "config:\n  gitops-lab:kubeconfigPath: ~/.kube/config\n");
        write("two.json", '{"config": {"gitops-lab:solveThrough": 3}}\n{"config": {}}\n');
        write("Pulumi.yaml", "name: gitops-lab\nruntime: nodejs\nconfig:\n  gitops-lab:root:\n    type: string\n    default: /\n");
        write("typo-key.yaml", 'config:\n  gitops-lab:solveThru: "3"\n');
        write("assigned.yaml", "config:\n  gitops-lab:solveThrough=3\n");
        fs.writeFileSync(path.join(dir, "latin1.yaml"), Buffer.from("config:\n  gitops-lab:root: /srv/\xdcbung\n", "latin1"));
        write("assigned-second.yaml", "config:\n  gitops-lab:root: /srv/lab\n  gitops-lab:solveThrough=3\n");
        write("foreign-prefix.yaml", "config:\n  cnpa-lab:tenantsLab: true\n  kubernetes:context: lab\n");
        fs.mkdirSync(path.join(dir, "outer", "root"), { recursive: true });
        write("outer/simulated-cluster.json", "{}");
        write("stderr-too.json", 'Warning: short name "app" is ambiguous\n{"apiVersion": "v1", "items": [], "kind": "List"}\n');
        fs.writeFileSync(path.join(dir, "dump.json.gz"), require("zlib").gzipSync('{"apiVersion": "v1", "items": []}'));
        write("names.txt", "applicationset.argoproj.io/tenants\napplication.argoproj.io/mandant-a\njob.batch/site-setup\n");
        write("items.json", '[{"kind": "ApplicationSet", "metadata": {"name": "tenants"}}]\n');
        // two dumps (Argo CD's objects, then Jobs and Pods) joined by jq -s
        write("slurped.json", '[{"kind": "List", "items": [{"kind": "ApplicationSet"}]}, {"kind": "List", "items": [{"kind": "Job"}]}]\n');
        write("doctor-out.json", '{"applicationSets": []}\n');
        fs.mkdirSync(path.join(dir, "savedlab"));
        write("savedlab/simulated-cluster.json", '{"rv":12,"objects":[],"podLogs":[]}');
        write("kc.yaml", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: https://127.0.0.1:6443}}]\n");
        write("nbsp.yaml", "config:\n  gitops-lab:root: /tmp/x\n  gitops-lab:solveThrough:\u00a04\n");
        write("appset.yaml", "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: shop\n");
        write("stall.json", JSON.stringify({ commit: "a".repeat(40), appset: "argocd/tenants", step: 2, blocking: "mandant-b" }));
        write("drift.json", JSON.stringify({ uid: "u", edited: "debug", restored: "warn", seconds: 2 }));
        write("cap-config.yaml", "Config:\n  gitops-lab:solveThrough: 4\n");
        write("glued-colon.yaml", "config:\n  gitops-lab:root: /tmp/x\n  gitops-lab:solveThrough:3\n");
        write("typo-prefix.yaml", 'config:\n  gitops_lab:solveThrough: "3"\n');
        write("top-level.yaml", 'gitops-lab:solveThrough: "3"\n');
        write("image-space.yaml", 'config:\n  gitops-lab:gitDaemonImage: "buildpack-deps:bookworm scm"\n');
        write("list.yaml", "- gitops-lab:tenantsLab: maybe\n");
        write(
            "no-current.yaml",
            "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: https://127.0.0.1:6443}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: lab, context: {cluster: c, user: u}}]\n",
        );
        write("image-upper.yaml", "config:\n  gitops-lab:gitDaemonImage: MyOrg/git\n");
        write("config-list.yaml", "config:\n  - gitops-lab:solveThrough: 3\n");
        write("secret-typo.yaml", "config:\n  gitops-lab:solveThruogh:\n    secure: AAAABBBB\n");
        write("twice.yaml", "config:\n  solveThrough: 9\n  gitops-lab:solveThrough: 6\n");
        write("twice-secret.yaml", "config:\n  gitops-lab:kubeconfigPath:\n    secure: AAAA\n  kubeconfigPath: /x\n");
        write("registry-password.yaml", "config:\n  gitops-lab:imageRegistry: http://admin:hunter2@10.0.0.5:5000\n");
        write("registry-no-scheme.yaml", "config:\n  gitops-lab:imageRegistry: admin:hunter2@ss@10.0.0.5:5000\n");
        write("registry-lab-name.yaml", "config:\n  gitops-lab:imageRegistry: http://registry.lab.internal\n");
        write("stall.json", JSON.stringify({ appset: "argocd/tenants", commit: "a".repeat(40), step: 2 }));
        write("kit-root.yaml", `config:\n  gitops-lab:root: ${path.resolve(__dirname, "..")}\n`);
        write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n");
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("has at least 40 of them", () => assert.ok(MISTAKES.length >= 40, `${MISTAKES.length}`));

    it("author: preflight of a stack whose root is the kit's own folder: a FAIL line says so", async () => {
        const r = await runMain("preflight", ["--config-file", path.join(dir, "kit-root.yaml")]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /^FAIL {2}the stack's root: root \S+ is the kit's own folder \(\S+\): the lab's srv\/ and root\/ would go among the kit's files/m,
        );
    });

    for (const [who, command, args, code, answer] of MISTAKES) {
        it(`${who}: ${command} ${args.join(" ")}`, async () => {
            const r = await runMain(
                command,
                args.map((a) => a.replace("{dir}", dir)),
            );
            assert.strictEqual(r.code, code, r.out);
            const lines = r.stderr.trim().split("\n");
            assert.strictEqual(lines.length, 1, `one line:\n${r.stderr}`);
            assert.match(lines[0], answer);
            assert.doesNotMatch(r.out, /\n\s+at /, "no stack trace");
        });
    }
});

describe("mistakes whose answer is on standard output", function () {
    this.timeout(60_000);
    let dir: string;
    before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "mistakes-out-"))));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("verify --json with no lab there: JSON that says so", async () => {
        const r = await runMain("verify", ["--root", path.join(dir, "none"), "--offline", "--json"]);
        assert.strictEqual(r.code, 1, r.out);
        const out = JSON.parse(r.stdout);
        assert.strictEqual(out.ok, false);
        assert.match(out.error, /^there is no shop lab under \S+none/);
        assert.deepStrictEqual(out.checks, []);
    });

    it("preflight --config-file of an empty file: every key at its default, said", async () => {
        const empty = path.join(dir, "empty.yaml");
        fs.writeFileSync(empty, "");
        const r = await runMain("preflight", ["--config-file", empty]);
        assert.match(
            r.stdout,
            /WARN {2}the stack's configuration: \S+empty\.yaml sets no gitops-lab: key: every key is at its default \(root \/, solveThrough \d, argocdVersion v3\.6\.\d+/,
        );
    });

    it("verify --stack-outputs given a kubeconfig: the check says it is YAML, a kubeconfig", async () => {
        const root = await rootAt(3);
        const kubeconfig = path.join(dir, "kubeconfig");
        fs.writeFileSync(kubeconfig, "apiVersion: v1\nkind: Config\nclusters: []\n");
        const r = await runMain("verify", ["--root", root, "--offline", "--through", "3", "--stack-outputs", kubeconfig]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /kubeconfig is YAML \(a kubeconfig: it goes with --kubeconfig\), not the stack's outputs, which are JSON/);
    });

    it("verify --stack-outputs given an empty file, or --root the folder holding labs: each said", async () => {
        const root = await rootAt(3);
        fs.writeFileSync(path.join(dir, "empty-outputs.json"), ""); // gitops-lab outputs > it, failed
        const r = await runMain("verify", [
            "--root",
            root,
            "--offline",
            "--through",
            "3",
            "--stack-outputs",
            path.join(dir, "empty-outputs.json"),
        ]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(
            r.stdout,
            /empty-outputs\.json is empty \(did the command that wrote it fail\? gitops-lab outputs needs the lab host's stack/,
        );
        // a folder of one's own holding the lab (the tests' shared one holds many)
        const holder = fs.mkdtempSync(path.join(os.tmpdir(), "labs-"));
        fs.renameSync(root, path.join(holder, "lab1"));
        const up = await runMain("verify", ["--root", holder, "--offline"]);
        assert.strictEqual(up.code, 1, up.out);
        assert.match(up.stderr, new RegExp(`there is no shop lab under ${holder}, but in folders of it: ${holder}/lab1: give one`));
        fs.rmSync(holder, { recursive: true, force: true });
    });

    it("preflight in a folder with its own stack file: it says that file is not read", () => {
        const here = fs.mkdtempSync(path.join(os.tmpdir(), "author-"));
        fs.writeFileSync(path.join(here, "Pulumi.dev.yaml"), "config:\n  gitops-lab:solveThrough: 4\n");
        const r = spawnSync(process.execPath, [BIN, "preflight", "--root", path.join(here, "host")], { cwd: here, encoding: "utf8" });
        assert.match(
            r.stdout,
            /^WARN {2}the stack's configuration: \S+Pulumi\.dev\.yaml is not read: preflight reads the project's \S+; to check yours, --config-file /m,
        );
        fs.rmSync(here, { recursive: true, force: true });
    });

    it("any command from a shell whose folder a reset removed: one line, cd first", () => {
        const gone = fs.mkdtempSync(path.join(os.tmpdir(), "gone-"));
        const r = spawnSync(
            "bash",
            ["-c", 'cd "$1" && rmdir "$1" && exec "$2" "$3" simulate --root ./x', "sh", gone, process.execPath, BIN],
            {
                encoding: "utf8",
            },
        );
        assert.strictEqual(r.status, 2, `${r.stdout}${r.stderr}`);
        assert.strictEqual(
            r.stderr,
            "gitops-lab: the current folder is gone (deleted while this shell was in it, by a reset?), so nothing can be read relative to it: cd to a folder that exists, then run the command again\n",
        );
    });

    it("verify --stack-outputs given a result file: the check says what it is", async () => {
        const root = await rootAt(3);
        const r = await runMain("verify", ["--root", root, "--offline", "--stack-outputs", path.join(root, "root/cnpa-env/incident.json")]);
        assert.strictEqual(r.code, 1, r.out);
        assert.match(r.stdout, /FAIL.*the stack outputs can be read/);
        assert.match(r.stdout, /incident\.json has no completedThrough: it is not this stack's outputs \(a result file\? keys: /);
        // verify's own --json output given for them: named as such
        const own = path.join(root, "verify.json");
        fs.writeFileSync(own, (await runMain("verify", ["--root", root, "--offline", "--json"])).stdout);
        const json = await runMain("verify", ["--root", root, "--offline", "--stack-outputs", own]);
        assert.match(json.stdout, /verify\.json is verify's own --json output \(graded results\), not the stack's outputs/);
        // graded at --step 2: said under that step, with the simulated lab's own answer (it has no stack outputs)
        const step = await runMain("verify", [
            "--root",
            root,
            "--offline",
            "--step",
            "2",
            "--stack-outputs",
            path.join(root, "root/cnpa-env/incident.json"),
        ]);
        assert.match(
            step.stdout,
            /^step 2 appset: not done \(as the lab stands, at step 3\): the stack outputs can be read; hint: the lab under \S+ is simulated: it has no stack, so no stack outputs \(pulumi up writes them on a lab host\); leave --stack-outputs out/,
        );
    });
});

describe("mistakes in a result file's values, and their hints", () => {
    const field = (name: "incident" | "drift" | "revert" | "report" | "promote", key: string) =>
        shopFieldsOf(name).find((f) => f.key === key)!;
    const stallStep = tenantsFieldsOf("stall").find((f) => f.key === "step")!;
    const stallCommit = tenantsFieldsOf("stall").find((f) => f.key === "commit")!;
    const recoveryOrder = tenantsFieldsOf("recovery").find((f) => f.key === "order")!;
    const sha = "0123456789abcdef0123456789abcdef01234567";
    for (const [f, value, hint] of [
        [field("incident", "commit"), sha.slice(0, 7), /^it holds 7 characters: write the full SHA \(git rev-parse 0123456 prints it\)$/],
        [field("incident", "commit"), sha.toUpperCase(), /^it holds upper-case letters: write the SHA in lower case, as git prints it$/],
        [field("drift", "seconds"), "1", /^it holds the string "1": write 1 without the quotes$/],
        [field("report", "bad_commit_reached_prod"), "false", /^it holds the string "false": write false without the quotes$/],
        [stallStep, "2", /^it holds the string "2": write 2 without the quotes$/],
        [field("incident", "commit"), null, /^it holds null, which is not a full 40-hex SHA$/],
        [
            recoveryOrder,
            [{ application: "tenants-mandant-a", step: "1", healthy_at: "2026-01-01T00:00:00Z" }],
            /^order\[0\]\.step holds the string "1": write 1 without the quotes$/,
        ],
        [
            recoveryOrder,
            [{ application: "tenants-mandant-a", step: 1, healthy_at: "yesterday" }],
            /^order\[0\]\.healthy_at holds "yesterday": /,
        ],
        [stallCommit, [sha, sha, sha, sha], /^it holds 4 commits: write one, the full SHA of the commit the step asks for$/],
        [
            field("drift", "uid"),
            "A7B0CCF9-1F2E-4D3C-8B9A-0123456789AB",
            /^it holds upper-case letters: write "a7b0ccf9-1f2e-4d3c-8b9a-0123456789ab", in lower case, as Kubernetes prints it$/,
        ],
        [field("drift", "seconds"), 0.5, /^it holds 0\.5: write a whole number of seconds, rounded up \(1\)$/],
        [
            tenantsFieldsOf("stall").find((f) => f.key === "detected_after_seconds")!,
            -20,
            /^it holds -20, below 0: the seconds are the later time minus the earlier \(subtracted the other way round\?\): 20$/,
        ],
        [
            field("incident", "dev_value"),
            true,
            /^it holds true, a boolean: write the value as the ConfigMap holds it, a string in quotes .*: "on"$/,
        ],
        [field("report", "rollback"), "Revert", /^it holds upper-case letters: write "revert", in lower case$/],
        [
            recoveryOrder,
            [{ application: "mandant-a", step: 1, healthy_at: "2026-12-06 00:14:06.919" }],
            /^order\[0\]\.healthy_at holds "2026-12-06 00:14:06\.919": write the time as Kubernetes writes it, RFC 3339 with a T and a zone/,
        ],
        [
            recoveryOrder,
            [{ application: "mandant-a", step: 1, healthy_at: "Sun Dec 06 2026 00:14:06 GMT+0000" }],
            /^order\[0\]\.healthy_at holds "Sun Dec 06 2026 00:14:06 GMT\+0000": write the time as Kubernetes writes it, RFC 3339 with a T and a zone \(2026-12-06T00:14:06Z\)$/,
        ],
        [
            recoveryOrder,
            [{ application: "mandant-a", step: 1, healthy_at: 1796515246 }],
            /^order\[0\]\.healthy_at holds 1796515246: write the time as Kubernetes writes it, RFC 3339 with a T and a zone \(1796515246 seconds since 1970 is 2026-12-06T00:00:46Z\)$/,
        ],
        [
            recoveryOrder,
            [{ application: "mandant-a", step: 1, healthy_at: "2026-12-07t21:30:18.928z" }],
            /^order\[0\]\.healthy_at holds "2026-12-07t21:30:18\.928z": write it with an upper-case T and Z, as Kubernetes writes and reads it: 2026-12-07T21:30:18\.928Z$/,
        ],
        [
            recoveryOrder,
            [{ application: "mandant-a", step: 1, healthy_at: null }],
            /^order\[0\]\.healthy_at holds null: no time yet: recovery\.json written before the rollout had completed\? write it once RolloutProgressing says/,
        ],
        [stallCommit, `${sha} ${sha.slice(0, 7)}`, /^it holds 2 commits: write one/],
        [
            recoveryOrder,
            [{ application: "mandant-a", step: 1, healthyAt: "2026-12-06T00:14:06Z" }],
            /^order\[0\]\.healthy_at is missing: it is written healthyAt, and the key is healthy_at$/,
        ],
        [recoveryOrder, [{ application: "mandant-a", healthy_at: "2026-12-06T00:14:06Z" }], /^order\[0\]\.step is missing$/],
        [
            recoveryOrder,
            // an entry of the ApplicationSet's status.applicationStatus, copied whole
            [
                {
                    application: "mandant-a",
                    lastTransitionTime: "2026-12-06T00:14:06Z",
                    message: "Application resource became Healthy, updating status from Progressing to Healthy.",
                    status: "Healthy",
                    step: "1",
                    targetRevisions: [sha],
                },
            ],
            /^order\[0\] has lastTransitionTime, message, status, targetRevisions, which order's entries do not take: order is a list of \{application, step, healthy_at\} \(copied from status\.applicationStatus\? keep its application and its step \(a number\), write its lastTransitionTime as healthy_at, and leave out the rest\)$/,
        ],
        [
            recoveryOrder,
            ["mandant-a"],
            /^order\[0\] holds "mandant-a", a string: order is a list of \{application, step, healthy_at\}, one object per entry$/,
        ],
        [
            field("revert", "prod_revision_during"),
            "release/prod",
            /^it holds "release\/prod", a branch's name, not a commit: write the full SHA it stood at \(an Application's status\.sync\.revision shows the commit Argo CD synced; git rev-parse origin\/release\/prod in the clone, after a git fetch, shows the branch's now/,
        ],
        [
            field("promote", "from"),
            "release/prod",
            /^it holds "release\/prod", a branch's name, not a commit: write the full SHA release\/prod stood at before your push, which pin\.json's release_prod_initial holds/,
        ],
        [
            field("revert", "prod_revision_during"),
            "",
            /^it is empty: the command that was to give it read nothing \(an Application's synced commit is status\.sync\.revision, singular; \.status\.sync\.revisions is for an Application of several sources/,
        ],
        [
            stallCommit,
            "HEAD",
            /^it holds "HEAD", git's name for the commit checked out \(it moves with the next commit\), not a SHA: write the full SHA it stands for \(git rev-parse HEAD in the clone prints it/,
        ],
        [
            field("incident", "commit"),
            "HEAD~1",
            /^it holds "HEAD~1", a commit named from the one checked out \(its name moves with the next commit\), not a SHA: write the full SHA it stands for \(git rev-parse HEAD~1 in the clone prints it/,
        ],
        [
            field("report", "bad_commit_reached_prod"),
            null,
            /^it holds null: write true or false \(did the command that was to answer fail\? git merge-base --is-ancestor SHA BRANCH exits 0 for yes, 1 for no, and 128 when it cannot find one of them: in the clone a branch of the remote is origin\/BRANCH\)$/,
        ],
        [
            field("report", "bad_commit_reached_prod"),
            1,
            /^it holds 1, a number: write true or false \(if 1 is a command's exit status, as git merge-base --is-ancestor's, it means no: false\)$/,
        ],
    ] as [SchemaField, unknown, RegExp][])
        it(`${f.key} = ${JSON.stringify(value)}`, () => {
            assert.ok(!f.check(value), "a mistake");
            assert.match(whyNot(f, value), hint);
        });
});
