/**
 * Dependency direction (npm run check:deps; docs/architecture.md#layers): layers point down.
 *
 *   main / cluster / server / runtime / cli-runtime / app / openapi   composition (wires everything)
 *   modules/<name>/        use cases; other modules only through api.ts / schemas.ts
 *   modules/module.ts      the module contract: imports no module
 *   jobs                   the job runner: db, platform
 *   platform               HTTP, auth, errors, clock, keys, the asset bundler: db, lib
 *   db                     the store: lib only (config for opening it), never platform
 *   config, lib            know nothing of the rest (lib: pure algorithms)
 *   web/<client>/          browser code: only itself and web/shared/ (bundled by platform/assets.ts)
 *
 * Tests (*.test.ts, test/**) and bench/** may reach anywhere, so the layering rules leave them out.
 * TypeScript `.js` specifiers resolve to the `.ts` sources; type-only imports are seen
 * (tsPreCompilationDeps) and count for every rule, cycles included: the house has no circles.
 */

/** Test and benchmark code: exempt from the layering rules. */
const TESTS = ['\\.test\\.ts$', '^test/', '^bench/'];

/** The composition root: only itself (and tests) may import it. */
const COMPOSITION = '^src/(app|runtime|cli-runtime|server|cluster|main|openapi)\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-platform-to-modules',
      severity: 'error',
      comment:
        'platform, lib, db and jobs are the mechanisms the modules are built on: they must not know the ' +
        'modules or the composition root (app, runtime, server, cluster, main, openapi), or the layers point up ' +
        'and every mechanism drags the whole application along. Pass what they need in (a callback, an ' +
        'interface defined on the lower side) instead.',
      from: { path: '^src/(platform|lib|db|jobs)/', pathNot: TESTS },
      to: { path: ['^src/modules/', '^src/web/', COMPOSITION] },
    },
    {
      name: 'db-below-platform',
      severity: 'error',
      comment:
        'src/db is the store: it sits below the platform and the job runner and must not import them ' +
        '(pass the clock or a token source in as a parameter instead), or db and platform form a circle.',
      from: { path: '^src/db/', pathNot: TESTS },
      to: { path: '^src/(platform|jobs)/' },
    },
    {
      name: 'platform-below-jobs',
      severity: 'error',
      comment:
        'The job runner (src/jobs) is built on the platform (clock, crypto) and the store; the platform ' +
        'must not import it back. A module that needs the runner gets it through Platform.jobs.',
      from: { path: '^src/platform/', pathNot: TESTS },
      to: { path: '^src/jobs/' },
    },
    {
      name: 'config-and-lib-know-nothing',
      severity: 'error',
      comment:
        'src/config.ts reads the environment; every layer may use it, so it imports nothing of src/ but ' +
        'src/lib, or it drags its importers along.',
      from: { path: '^src/config\\.ts$' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'contract-imports-no-module',
      severity: 'error',
      comment:
        'src/modules/module.ts is the contract below the modules: it must not import any module. A module ' +
        'registers what the contract needs to know (its extension point types) from its own api.ts by ' +
        'declaration merging into ExtensionPointTypes.',
      from: { path: '^src/modules/module\\.ts$' },
      to: { path: '^src/modules/[^/]+/' },
    },
    {
      name: 'web-clients-stand-alone',
      severity: 'error',
      comment:
        'src/web/<client>/ is browser code bundled by src/platform/assets.ts: it may import its own ' +
        'folder and src/web/shared/ only (and browser packages), never server code, and clients do not ' +
        'import each other.',
      from: { path: '^src/web/([^/]+)/', pathNot: TESTS },
      to: { path: '^src/', pathNot: ['^src/web/$1/', '^src/web/shared/'] },
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
        'run) and tie the files of the cycle together so none can be read alone. Type-only imports ' +
        'count too: a type circle is still a circle for the reader (the module shape avoids them: ' +
        'Needs live in api.ts, which module.ts and service.ts both import).',
      from: { path: '^src/' },
      to: { circular: true },
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
