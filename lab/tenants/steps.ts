/** The tenants lab's steps as a learner meets them (steps.yaml beside this file), with this lab's paths. */
import * as path from "path";
import { LabStep, labSteps } from "../grader/steps";
import { TenantsLayout } from "./layout";

export const TENANTS_STEPS_FILE = path.join(__dirname, "steps.yaml");

export const tenantsSteps = (layout: TenantsLayout): LabStep[] => labSteps(TENANTS_STEPS_FILE, layout);
