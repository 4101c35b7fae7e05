// The one Drizzle schema: every feature's tables, re-exported for `createDb`.
export * from "./data-plane.js";
export * from "./foundation.js";
export * from "./secrets.js";
export * from "./syncs.js";
