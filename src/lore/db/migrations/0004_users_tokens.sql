-- lore schema, version 4: users, their sign-in tokens and their configs (team / hosted mode).
--
-- Isolation by construction: in sign-in mode every space id a user's session sees is namespaced
-- `<user>/<space>` (lore.userconfig). The domain code filters by space id, so a user can never name
-- another user's space: their config (the only source of readable and writable ids) holds only their
-- own. The space CHECKs of earlier migrations accept that one optional `<user>/` prefix.

CREATE TABLE users (
    name       text        PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$'),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Only a SHA-256 of each token is stored; the token itself is printed once, at creation.
-- kind: `personal` (lore token create), `access` / `refresh` (issued by the OAuth flow). A refresh
-- token's parent is the personal token the user signed in with; an access token's, its refresh
-- token: revoking a token revokes everything issued from it.
CREATE TABLE tokens (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_name    text        NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    kind         text        NOT NULL DEFAULT 'personal' CHECK (kind IN ('personal', 'access', 'refresh')),
    hash         bytea       NOT NULL UNIQUE CHECK (octet_length(hash) = 32),
    label        text        CHECK (label IS NULL OR length(label) BETWEEN 1 AND 200),
    client_id    text,
    parent_id    bigint      REFERENCES tokens (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    revoked_at   timestamptz,
    last_used_at timestamptz,
    CHECK (expires_at IS NULL OR expires_at > created_at)
);
CREATE INDEX tokens_by_user ON tokens (user_name, created_at);
CREATE INDEX tokens_by_parent ON tokens (parent_id) WHERE parent_id IS NOT NULL;

-- A user's config file as pushed (`lore config push`), with the HOME that its `~` stands for.
CREATE TABLE user_configs (
    user_name  text        PRIMARY KEY REFERENCES users (name) ON DELETE CASCADE,
    toml       text        NOT NULL CHECK (octet_length(toml) <= 262144),
    home       text        NOT NULL,
    version    bigint      NOT NULL DEFAULT 1,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- The OAuth flow (`lore serve --oauth`): clients registered dynamically (RFC 7591), authorization
-- requests waiting for the user to sign in, and codes waiting to be exchanged. In the database, not
-- in memory, so that any replica can take any step. Requests and codes are keyed by a SHA-256 too.
CREATE TABLE oauth_clients (
    client_id  text        PRIMARY KEY,
    info       jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE oauth_requests (
    hash       bytea       PRIMARY KEY CHECK (octet_length(hash) = 32),
    client_id  text        NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    params     jsonb       NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE TABLE oauth_codes (
    hash       bytea       PRIMARY KEY CHECK (octet_length(hash) = 32),
    client_id  text        NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    user_name  text        NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    grant_id   bigint      NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
    params     jsonb       NOT NULL,
    expires_at timestamptz NOT NULL
);

-- Relax every `space`-style CHECK written so far (facts, notes, and any table of migrations 2-3) to
-- accept one `<user>/` prefix. Written against the constraint text so that it finds them all.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT c.conrelid::regclass AS tbl, c.conname, pg_get_constraintdef(c.oid) AS def
        FROM pg_constraint c
        JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE c.contype = 'c' AND n.nspname = current_schema()
          AND strpos(pg_get_constraintdef(c.oid), '^[A-Za-z0-9_.-]{1,64}$') > 0
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.tbl, r.conname);
        EXECUTE format('ALTER TABLE %s ADD CONSTRAINT %I %s', r.tbl, r.conname,
            replace(r.def, '^[A-Za-z0-9_.-]{1,64}$',
                    '^([A-Za-z0-9][A-Za-z0-9_.@-]{0,63}/)?[A-Za-z0-9_.-]{1,64}$'));
    END LOOP;
END $$;
