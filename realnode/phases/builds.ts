/** Phase: what the node runs, built once (cached): the plane's and the node's programs, the images' layers. */
import { buildRealPlane } from "../../realplane/build";
import { buildRealNode } from "../build";
import { buildImageLayers, imageRecipes } from "../images";
import { NodeContext } from "./context";

export async function builds(ctx: NodeContext): Promise<void> {
    await buildRealPlane(ctx.log);
    await buildRealNode(ctx.log);
    ctx.recipes = imageRecipes();
    await buildImageLayers(ctx.recipes, ctx.log);
}
