-- lore schema, version 1: bitemporal facts, notes, edges, and the forget audit trail.
--
-- Belief (transaction) time: recorded_at .. superseded_at (NULL = current belief).
-- Valid time (facts):       valid_from .. valid_to       (NULL = still true).
-- Rows are never updated in place except to close superseded_at.
-- A lineage is the public identity (f_<lineage>, n_<lineage>); each version is a row.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE facts (
    version_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lineage       bigint      NOT NULL,
    space         text        NOT NULL CHECK (space ~ '^[A-Za-z0-9_.-]{1,64}$'),
    statement     text        NOT NULL CHECK (length(statement) BETWEEN 1 AND 1000),
    subject       text        CHECK (subject IS NULL OR length(subject) BETWEEN 1 AND 200),
    valid_from    timestamptz NOT NULL DEFAULT now(),
    valid_to      timestamptz,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    superseded_at timestamptz,
    source        text        NOT NULL,
    workspace     text,
    CHECK (valid_to IS NULL OR valid_to > valid_from),
    CHECK (superseded_at IS NULL OR superseded_at >= recorded_at)
);
CREATE SEQUENCE fact_lineage_seq;
-- At most one current version per lineage: enforced here, not by code.
CREATE UNIQUE INDEX facts_one_current ON facts (lineage) WHERE superseded_at IS NULL;
CREATE INDEX facts_current_by_space ON facts (space, recorded_at DESC) WHERE superseded_at IS NULL;
CREATE INDEX facts_history ON facts (lineage, recorded_at);

-- array_to_string is only STABLE; tags are plain text, so joining them is immutable.
CREATE FUNCTION lore_tags_text(tags text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT array_to_string(tags, ' ') $$;

CREATE TABLE notes (
    version_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    lineage         bigint      NOT NULL,
    space           text        NOT NULL CHECK (space ~ '^[A-Za-z0-9_.-]{1,64}$'),
    kind            text        NOT NULL CHECK (kind IN ('brief', 'product', 'pattern', 'tech', 'active',
                                    'progress', 'devenv', 'task', 'plan', 'decision', 'note')),
    title           text        CHECK (title IS NULL OR length(title) BETWEEN 1 AND 200),
    body            text        NOT NULL CHECK (octet_length(body) BETWEEN 1 AND 32768),
    tags            text[]      NOT NULL DEFAULT '{}' CHECK (cardinality(tags) <= 16),
    tsv             tsvector    GENERATED ALWAYS AS (
                        setweight(to_tsvector('english', coalesce(title, '')), 'A') ||
                        setweight(to_tsvector('english', lore_tags_text(tags)), 'B') ||
                        setweight(to_tsvector('english', body), 'C')) STORED,
    embedding       vector,
    embedding_model text,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    superseded_at   timestamptz,
    source          text        NOT NULL,
    workspace       text,
    CHECK (superseded_at IS NULL OR superseded_at >= recorded_at),
    CHECK ((embedding IS NULL) = (embedding_model IS NULL))
);
CREATE SEQUENCE note_lineage_seq;
CREATE UNIQUE INDEX notes_one_current ON notes (lineage) WHERE superseded_at IS NULL;
CREATE INDEX notes_tsv ON notes USING gin (tsv);
CREATE INDEX notes_current_by_space ON notes (space, kind) WHERE superseded_at IS NULL;

-- Typed, directed links between note lineages (issue: retrieval adds expansion). Never across spaces.
CREATE TABLE edges (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    space       text        NOT NULL,
    from_note   bigint      NOT NULL,
    relation    text        NOT NULL CHECK (relation IN ('depends_on', 'blocks', 'relates_to', 'supersedes',
                                'part_of', 'refines', 'cross_ref')),
    to_note     bigint      NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    source      text        NOT NULL,
    UNIQUE (from_note, relation, to_note),
    CHECK (from_note <> to_note)
);

CREATE FUNCTION edges_same_space() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM notes WHERE lineage = NEW.from_note AND space = NEW.space)
       OR NOT EXISTS (SELECT 1 FROM notes WHERE lineage = NEW.to_note AND space = NEW.space) THEN
        RAISE EXCEPTION 'edge % -> % must join two notes of space %', NEW.from_note, NEW.to_note, NEW.space
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER edges_same_space BEFORE INSERT OR UPDATE ON edges
    FOR EACH ROW EXECUTE FUNCTION edges_same_space();

-- Who forgot what, when and why. The forgotten row itself stays (its belief closed).
CREATE TABLE forget_log (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    space      text        NOT NULL,
    item_kind  text        NOT NULL CHECK (item_kind IN ('fact', 'note')),
    lineage    bigint      NOT NULL,
    reason     text        NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
    source     text        NOT NULL,
    workspace  text,
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX forget_log_item ON forget_log (item_kind, lineage);
