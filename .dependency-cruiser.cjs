/**
 * Dependency direction (npm run check:deps): layers point down.
 *
 *   main / cluster / server / runtime / app / context   composition (wires everything)
 *   modules/<name>/                           use cases; other modules only through api.ts / schemas.ts
 *   platform, db, jobs                        mechanisms, know nothing of the modules
 *   lib                                       pure algorithms, know nothing at all
 *
 * Tests (*.test.ts, test/**) and bench/** may reach anywhere, so rules a–d leave them out.
 * TypeScript `.js` specifiers resolve to the `.ts` sources; type-only imports are seen
 * (tsPreCompilationDeps) and count for the layering rules, not for cycles.
 */

/** Test and benchmark code: exempt from the layering rules. */
const TESTS = ['\\.test\\.ts$', '^test/', '^bench/'];

/** The composition root: only itself (and tests) may import it. */
const COMPOSITION = '^src/(context|app|runtime|server|cluster|main)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-platform-to-modules',
      severity: 'error',
      comment:
        'platform, lib, db and jobs are the mechanisms the modules are built on: they must not know the ' +
        'modules or the composition root (context, app, runtime, server, main), or the layers point up ' +
        'and every mechanism drags the whole application along. Pass what they need in (a callback, an ' +
        'interface defined on the lower side) instead.',
      from: { path: '^src/(platform|lib|db|jobs)/', pathNot: TESTS },
      to: { path: ['^src/modules/', COMPOSITION] },
    },
    {
      name: 'lib-is-pure',
      severity: 'error',
      comment:
        'src/lib holds pure algorithms (intervals, schedules, slots): no database, no clock, no HTTP, no ' +
        'platform. It may only import other files of src/lib (and packages), so it stays testable and ' +
        'reusable on its own.',
      from: { path: '^src/lib/', pathNot: TESTS },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'modules-not-up',
      severity: 'error',
      comment:
        'Modules are wired by the composition root (context, app, runtime, server, main); a module that ' +
        'imports it depends on every other module and creates cycles. Take dependencies as constructor ' +
        'or function parameters instead.',
      from: { path: '^src/modules/', pathNot: TESTS },
      to: { path: COMPOSITION },
    },
    {
      name: 'module-to-module-via-public-surface',
      severity: 'error',
      comment:
        "A module may use another module only through that module's public surface: " +
        'src/modules/<other>/api.ts (its public API and types) and src/modules/<other>/schemas.ts. ' +
        "Anything else (service, repo, routes, tables, ...) is the other module's private implementation.",
      from: { path: '^src/modules/([^/]+)/', pathNot: TESTS },
      to: {
        path: '^src/modules/[^/]+/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/(api|schemas)\\.ts$'],
      },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Import cycles make module initialisation order fragile (a value read before its module has ' +
        'run) and tie the files of the cycle together. Type-only imports vanish at compile time, so ' +
        'cycles through them are not counted.',
      from: { path: '^src/' },
      to: {
        circular: true,
        dependencyTypesNot: ['type-only'],
        viaOnly: { dependencyTypesNot: ['type-only'] },
      },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: { text: { highlightFocused: true } },
  },
};
