// The bounds of `driftless import --depth` (ops/import.ts), apart so the CLI reads them without loading the import.

/** The deepest walk `--depth` takes (Resource Manager nests folders 10 deep under an organization). */
export const MAX_IMPORT_DEPTH = 10;
/** The most parents one import lists under (the walk's bound beside its depth); the rest are named, not listed. */
export const MAX_IMPORT_PARENTS = 1000;
