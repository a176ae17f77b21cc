import type { AnyModule } from '../../src/modules/index.js';
import { defineModule, type ModuleParts } from '../../src/modules/module.js';

/** A module FOR TESTS that only contributes to extension points (busy sources, grants, statuses). */
export function contributing(name: string, contributes: ModuleParts<unknown>['contributes']): AnyModule {
  return defineModule()({ name, needs: [], create: () => ({ api: {}, contributes }) });
}
