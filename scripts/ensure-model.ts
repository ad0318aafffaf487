/**
 * Builds the repo's own models when they are missing, partial or built by an older recipe; otherwise does nothing.
 * Runs before `npm test` (and the demo and benchmarks), so a fresh clone needs no separate step.
 */
import { buildModel, report } from './build-model.js';
import { gloveRecipe, modelDir, tinyBertRecipe } from './models/index.js';
import { staleReason } from './models/model-folder.js';

for (const recipe of [gloveRecipe(), tinyBertRecipe]) {
  const reason = staleReason(modelDir(recipe.id), recipe.recipe());
  if (reason === null) {
    console.log(`model ${recipe.id}: up to date`);
    continue;
  }
  console.log(`model ${recipe.id}: ${reason}, building…`);
  console.log(report(buildModel(recipe)));
}
