// The one Drizzle schema: every feature's tables, re-exported for `createDb`.
export * from "./foundation.js";
