-- Foundation: organisations, users, machine identities, universal auth, projects, roles, memberships,
-- environments, folders, encryption keys and the audit log.
CREATE TABLE organizations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  slug text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE server_config (
  id int PRIMARY KEY CHECK (id = 1),
  initialized boolean NOT NULL DEFAULT false,
  admin_identity_ids uuid[] NOT NULL DEFAULT '{}'
);

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL UNIQUE,
  username text NOT NULL,
  first_name text,
  last_name text,
  password_hash text NOT NULL,
  super_admin boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE org_memberships (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, user_id)
);

CREATE TABLE user_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  is_revoked boolean NOT NULL DEFAULT false,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE identities (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL,
  org_role text NOT NULL,
  auth_method text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX identities_org_idx ON identities (org_id);

CREATE TABLE identity_universal_auths (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  identity_id uuid NOT NULL UNIQUE REFERENCES identities(id) ON DELETE CASCADE,
  client_id uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
  access_token_ttl bigint NOT NULL DEFAULT 2592000,
  access_token_max_ttl bigint NOT NULL DEFAULT 2592000,
  access_token_num_uses_limit bigint NOT NULL DEFAULT 0,
  access_token_period bigint NOT NULL DEFAULT 0,
  client_secret_trusted_ips jsonb NOT NULL,
  access_token_trusted_ips jsonb NOT NULL,
  lockout_enabled boolean NOT NULL DEFAULT true,
  lockout_threshold int NOT NULL DEFAULT 3,
  lockout_duration_seconds int NOT NULL DEFAULT 300,
  lockout_counter_reset_seconds int NOT NULL DEFAULT 30,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE identity_ua_client_secrets (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  identity_ua_id uuid NOT NULL REFERENCES identity_universal_auths(id) ON DELETE CASCADE,
  description text NOT NULL DEFAULT '',
  client_secret_prefix text NOT NULL,
  client_secret_hash text NOT NULL,
  client_secret_ttl bigint NOT NULL DEFAULT 0,
  client_secret_num_uses bigint NOT NULL DEFAULT 0,
  client_secret_num_uses_limit bigint NOT NULL DEFAULT 0,
  is_client_secret_revoked boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX identity_ua_client_secrets_prefix_idx ON identity_ua_client_secrets (identity_ua_id, client_secret_prefix);

CREATE TABLE identity_access_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  identity_id uuid NOT NULL REFERENCES identities(id) ON DELETE CASCADE,
  client_secret_id uuid REFERENCES identity_ua_client_secrets(id) ON DELETE CASCADE,
  auth_method text NOT NULL,
  access_token_ttl bigint NOT NULL,
  access_token_max_ttl bigint NOT NULL,
  access_token_num_uses bigint NOT NULL DEFAULT 0,
  access_token_num_uses_limit bigint NOT NULL DEFAULT 0,
  access_token_period bigint NOT NULL DEFAULT 0,
  is_revoked boolean NOT NULL DEFAULT false,
  last_renewed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX identity_access_tokens_identity_idx ON identity_access_tokens (identity_id);

CREATE TABLE projects (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL,
  slug text NOT NULL,
  description text,
  type text NOT NULL DEFAULT 'secret-manager',
  has_delete_protection boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, slug)
);

-- Wrapped data keys: one per project, one per organisation (owner_id is either).
CREATE TABLE encryption_keys (
  owner_id uuid PRIMARY KEY,
  encrypted_key bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE project_roles (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  slug text NOT NULL,
  name text NOT NULL,
  description text,
  permissions jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, slug)
);

CREATE TABLE project_memberships (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  actor_type text NOT NULL CHECK (actor_type IN ('identity', 'user')),
  actor_id uuid NOT NULL,
  roles jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, actor_id)
);
CREATE INDEX project_memberships_actor_idx ON project_memberships (actor_id);

CREATE TABLE environments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name text NOT NULL,
  slug text NOT NULL,
  position int NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, slug)
);

-- Folders keep their full path so a (environment, path) lookup is one indexed read.
CREATE TABLE folders (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  env_id uuid NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
  parent_id uuid REFERENCES folders(id) ON DELETE CASCADE,
  name text NOT NULL,
  path text NOT NULL,
  description text,
  version int NOT NULL DEFAULT 1,
  is_reserved boolean NOT NULL DEFAULT false,
  last_secret_modified timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (env_id, path)
);
CREATE INDEX folders_parent_idx ON folders (parent_id);

CREATE TABLE audit_logs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid,
  project_id uuid,
  actor_type text NOT NULL,
  actor_id text,
  actor_name text,
  event_type text NOT NULL,
  resource jsonb NOT NULL DEFAULT '{}',
  ip text,
  user_agent text,
  outcome text NOT NULL DEFAULT 'success',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_logs_org_time_idx ON audit_logs (org_id, created_at DESC);
CREATE INDEX audit_logs_project_time_idx ON audit_logs (project_id, created_at DESC);
