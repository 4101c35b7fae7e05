import { buildMongoQueryMatcher, createMongoAbility, type MongoAbility } from "@casl/ability";
import picomatch from "picomatch";
import type { PermissionRule } from "../../db/schema/index.js";
import { AppError } from "../../lib/errors.js";

/**
 * Pure permission evaluation on @casl/ability, with Infisical's extra operators:
 * - `$glob`: picomatch with `strictSlashes: false` (so `/app/**` matches `/app` and below, not `/apple`);
 * - `$neq`: accepted as a spelling of Mongo's `$ne`.
 * Picomatch matchers are compiled once per pattern and reused.
 */
const globCache = new Map<string, (s: string) => boolean>();
function globMatch(value: unknown, pattern: unknown): boolean {
  if (typeof value !== "string" || typeof pattern !== "string" || pattern === "") return false;
  let m = globCache.get(pattern);
  if (!m) {
    m = picomatch(pattern, { strictSlashes: false });
    if (globCache.size > 10_000) globCache.clear();
    globCache.set(pattern, m);
  }
  return m(value);
}

type FieldNode = { field: string; value: unknown };
type Ctx = { get: (obj: unknown, field: string) => unknown };

const conditionsMatcher = buildMongoQueryMatcher(
  {
    $glob: { type: "field", validate: () => undefined },
    $neq: { type: "field" },
  } as never,
  {
    glob: (node: FieldNode, object: unknown, ctx: Ctx) => globMatch(ctx.get(object, node.field), node.value),
    neq: (node: FieldNode, object: unknown, ctx: Ctx) => ctx.get(object, node.field) !== node.value,
  } as never,
);

export type Ability = MongoAbility;

export function buildAbility(rules: PermissionRule[]): Ability {
  return createMongoAbility(
    rules.map((r) => ({
      action: r.action,
      subject: r.subject,
      conditions: r.conditions as never,
      inverted: r.inverted ?? false,
    })),
    { conditionsMatcher } as never,
  );
}

export type SubjectFields = Record<string, unknown>;

/**
 * The subject type goes in CASL's own `__caslSubjectType__` property, written first, where its
 * `detectSubjectType` reads it. Not `subject(type, { ...fields })`: that helper defines the property on
 * the spread copy afterwards, and on Node 20's V8 a spread copy given another property survives the
 * young-generation collections it should die in (see changeAt in secrets/secrets-notify.ts). This
 * runs once or twice per request.
 */
export function can(ability: Ability, action: string, subject: string, fields?: SubjectFields): boolean {
  return fields
    ? ability.can(action, { __caslSubjectType__: subject, ...fields } as never)
    : ability.can(action, subject);
}

/** Throws Infisical's 403 `PermissionDenied` envelope, listing the caller's rules for that pair. */
export function assertCan(ability: Ability, action: string, subject: string, fields?: SubjectFields): void {
  if (can(ability, action, subject, fields)) return;
  const details = ability.rulesFor(action, subject).map((r) => ({
    action: r.action,
    inverted: r.inverted,
    subject: r.subject,
    conditions: r.conditions ?? null,
  }));
  throw new AppError("PERMISSION_DENIED", `You are not allowed to ${action} on ${subject}`, { details });
}
