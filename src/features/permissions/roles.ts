import type { PermissionRule } from "../../db/schema/index.js";

/**
 * Subjects and actions, with Infisical's wire names (shared/reference/events-auth.md §3). Custom roles
 * may only use these; unknown subjects or actions are a 400 when the role is saved.
 */
export const SUBJECT_ACTIONS = {
  secrets: ["read", "describeSecret", "readValue", "create", "edit", "delete"],
  "secret-folders": ["read", "create", "edit", "delete"],
  "secret-imports": ["read", "create", "edit", "delete"],
  environments: ["read", "create", "edit", "delete"],
  tags: ["read", "create", "edit", "delete"],
  "secret-syncs": ["read", "create", "edit", "delete", "sync-secrets", "import-secrets", "remove-secrets"],
  "secret-events": [
    "subscribe-on-created",
    "subscribe-on-updated",
    "subscribe-on-deleted",
    "subscribe-on-import-mutations",
  ],
  "app-connections": ["read", "create", "edit", "delete", "connect"],
  identity: ["read", "create", "edit", "delete"],
  member: ["read", "create", "edit", "delete"],
  role: ["read", "create", "edit", "delete"],
  settings: ["read", "edit", "delete"],
  "audit-logs": ["read"],
} as const;

export type Subject = keyof typeof SUBJECT_ACTIONS;
export type Action<S extends Subject = Subject> = (typeof SUBJECT_ACTIONS)[S][number];

/** Subjects whose rules may carry `environment` / `secretPath` conditions. */
export const CONDITIONAL_SUBJECTS: readonly Subject[] = [
  "secrets",
  "secret-folders",
  "secret-imports",
  "secret-syncs",
  "secret-events",
];

const all = (subject: Subject): PermissionRule => ({ subject, action: [...SUBJECT_ACTIONS[subject]] });
const some = (subject: Subject, action: string[]): PermissionRule => ({ subject, action });

const memberRules: PermissionRule[] = [
  all("secrets"),
  all("secret-folders"),
  all("secret-imports"),
  all("environments"),
  all("tags"),
  all("secret-syncs"),
  all("secret-events"),
  some("app-connections", ["read", "connect"]),
  some("identity", ["read"]),
  some("member", ["read"]),
  some("role", ["read"]),
  some("settings", ["read"]),
];

export const BUILT_IN_ROLES: Record<string, { name: string; rules: PermissionRule[] }> = {
  admin: {
    name: "Admin",
    rules: (Object.keys(SUBJECT_ACTIONS) as Subject[]).map(all),
  },
  member: { name: "Developer", rules: memberRules },
  viewer: {
    name: "Viewer",
    rules: [
      some("secrets", ["read", "describeSecret", "readValue"]),
      some("secret-folders", ["read"]),
      some("secret-imports", ["read"]),
      some("environments", ["read"]),
      some("tags", ["read"]),
      some("secret-syncs", ["read"]),
      all("secret-events"),
      some("app-connections", ["read"]),
      some("identity", ["read"]),
      some("member", ["read"]),
      some("role", ["read"]),
      some("settings", ["read"]),
    ],
  },
  "no-access": { name: "No Access", rules: [] },
};

export const isBuiltInRole = (slug: string) => Object.hasOwn(BUILT_IN_ROLES, slug);
