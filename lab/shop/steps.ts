/** The shop lab's steps as a learner meets them (steps.yaml beside this file), with this lab's paths. */
import * as path from "path";
import { LabStep, labSteps } from "../grader/steps";
import { ShopLayout } from "./layout";

export const SHOP_STEPS_FILE = path.join(__dirname, "steps.yaml");

export const shopSteps = (layout: ShopLayout): LabStep[] => labSteps(SHOP_STEPS_FILE, layout);
