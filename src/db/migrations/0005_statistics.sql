-- Planner statistics only where queries filter, join or sort. ANALYZE samples 300 × the largest
-- statistics target of a table's columns and computes statistics for every column, and on embedded
-- PGlite it runs on the event loop. With the default target (100), one ANALYZE held every request for
-- ~130 ms on a 60,000-row audit log and ~90 ms on 40,000 secrets; with these targets, ~10 ms and ~32 ms.
-- Sealed values, JSON payloads, free text and bookkeeping columns are never searched, so they get none.
-- The audit log's filter columns keep a small sample: its queries go through the
-- (org_id | project_id, created_at) indexes either way. The secrets' lookup columns (folder_id, key,
-- type, user_id) keep the default.
ALTER TABLE audit_logs
  ALTER COLUMN id SET STATISTICS 0,
  ALTER COLUMN actor_name SET STATISTICS 0,
  ALTER COLUMN resource SET STATISTICS 0,
  ALTER COLUMN ip SET STATISTICS 0,
  ALTER COLUMN user_agent SET STATISTICS 0,
  ALTER COLUMN outcome SET STATISTICS 0,
  ALTER COLUMN org_id SET STATISTICS 10,
  ALTER COLUMN project_id SET STATISTICS 10,
  ALTER COLUMN actor_type SET STATISTICS 10,
  ALTER COLUMN actor_id SET STATISTICS 10,
  ALTER COLUMN event_type SET STATISTICS 10,
  ALTER COLUMN created_at SET STATISTICS 10;
ALTER TABLE secrets
  ALTER COLUMN id SET STATISTICS 0,
  ALTER COLUMN version SET STATISTICS 0,
  ALTER COLUMN encrypted_value SET STATISTICS 0,
  ALTER COLUMN encrypted_comment SET STATISTICS 0,
  ALTER COLUMN skip_multiline_encoding SET STATISTICS 0,
  ALTER COLUMN encrypted_reminder_note SET STATISTICS 0,
  ALTER COLUMN reminder_repeat_days SET STATISTICS 0,
  ALTER COLUMN metadata SET STATISTICS 0,
  ALTER COLUMN actor_type SET STATISTICS 0,
  ALTER COLUMN actor_id SET STATISTICS 0,
  ALTER COLUMN actor_name SET STATISTICS 0,
  ALTER COLUMN actor_membership_id SET STATISTICS 0,
  ALTER COLUMN created_at SET STATISTICS 0,
  ALTER COLUMN updated_at SET STATISTICS 0;
