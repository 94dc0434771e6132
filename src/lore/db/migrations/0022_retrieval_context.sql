-- Retrieval, round 3 (docs/design.md, Retrieval): a note is indexed with its context, the keyword
-- side weighs words by how rare they are in the space, and a note may say when it happened.
-- Only adds and relaxes: an older process still writes and searches notes (its notes get no
-- context; the term counts below follow every write through a trigger, whoever makes it).

-- session: which agent session wrote the note (a hash of the MCP session; NULL: a command, the web
-- UI, lore itself). context_before / context_after: the text of the note written just before / just
-- after it in the same session and space, filled by the embedding worker off the write path ('' =
-- none; NULL = not looked at yet). happened_at: when what it says happened (by default when it was
-- written; NULL in rows older than this migration: their recorded_at says it).
ALTER TABLE notes ADD COLUMN session text CHECK (length(session) <= 64);
ALTER TABLE notes ADD COLUMN context_before text CHECK (length(context_before) <= 1000);
ALTER TABLE notes ADD COLUMN context_after text CHECK (length(context_after) <= 1000);
ALTER TABLE notes ADD COLUMN happened_at timestamptz;
ALTER TABLE notes ALTER COLUMN happened_at SET DEFAULT now();  -- new rows; older ones stay NULL

-- A second model's vector beside the first (the extra `shared-lore[e5]`: multilingual-e5-small),
-- fused as a third signal. Its HNSW index and the index of rows waiting for it are made by the
-- embedding worker on first use (lore.store.embed_worker.ensure_second_indexes): a lore without the
-- extra pays nothing for them.
ALTER TABLE notes ADD COLUMN embedding2 vector;
ALTER TABLE notes ADD COLUMN embedding2_model text;
ALTER TABLE notes ADD CONSTRAINT notes_embedding2_model CHECK ((embedding2 IS NULL) = (embedding2_model IS NULL));

-- The keyword side's text: title (A), tags (B), body (C) as before, and now the note's kind (unless
-- the plain `note`) and its context, at the lowest weight (D). What is stored and shown is unchanged.
-- The column is made again with the wider expression (an older process reads the same column).
ALTER TABLE notes DROP COLUMN tsv;
ALTER TABLE notes ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce(title, '')), 'A')
    || setweight(to_tsvector('english', lore_tags_text(tags)), 'B')
    || setweight(to_tsvector('english', body), 'C')
    || setweight(to_tsvector('english', CASE WHEN kind = 'note' THEN '' ELSE kind END || ' '
                 || coalesce(context_before, '') || ' ' || coalesce(context_after, '')), 'D')
) STORED;
CREATE INDEX notes_tsv ON notes USING gin (tsv);

-- The previous note of a session; the notes whose context the worker has not looked at yet.
CREATE INDEX notes_by_session ON notes (space, session, lineage)
    WHERE session IS NOT NULL AND superseded_at IS NULL;
CREATE INDEX notes_uncontexted ON notes (version_id)
    WHERE session IS NOT NULL AND context_before IS NULL AND superseded_at IS NULL;

-- Term statistics for the keyword side's inverse document frequency: per space, how many current
-- notes hold each word in their own text (title, tags, body: weights A-C, never the context), and
-- how many current notes there are. A trigger appends what each write changes (a note that becomes
-- current: +1 for each of its words and for the note itself, lexeme ''; one that stops being
-- current, by a revision, a forget or a purge: -1) to note_term_changes, whoever writes it; the
-- embedding worker (and `lore reindex`, `lore import`) fold the changes into the counts
-- (lore_compact_terms). Appending never waits for another writer and stays cheap inside a long
-- transaction, where updating one counts row per write made an import of n notes cost n squared.
-- A search adds the changes not folded yet to the counts.
CREATE TABLE note_term_spaces (
    space text PRIMARY KEY,
    notes integer NOT NULL
);
CREATE TABLE note_terms (
    space  text NOT NULL,
    lexeme text NOT NULL,
    notes  integer NOT NULL,
    PRIMARY KEY (space, lexeme)
);
CREATE TABLE note_term_changes (
    id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    space  text NOT NULL,
    lexeme text NOT NULL,  -- '' counts the note itself
    delta  integer NOT NULL
);
CREATE INDEX note_term_changes_by_word ON note_term_changes (space, lexeme);

CREATE FUNCTION lore_count_terms(p_space text, p_tsv tsvector, p_delta integer) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO note_term_changes (space, lexeme, delta)
        SELECT p_space, w, p_delta FROM unnest(array_prepend('', tsvector_to_array(ts_filter(p_tsv, '{a,b,c}')))) w;
$$;

CREATE FUNCTION lore_note_terms() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.superseded_at IS NULL THEN
            PERFORM lore_count_terms(NEW.space, NEW.tsv, 1);
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        IF OLD.superseded_at IS NULL THEN
            PERFORM lore_count_terms(OLD.space, OLD.tsv, -1);
        END IF;
    ELSIF OLD.superseded_at IS NULL AND NEW.superseded_at IS NOT NULL THEN
        PERFORM lore_count_terms(OLD.space, OLD.tsv, -1);
    ELSIF OLD.superseded_at IS NOT NULL AND NEW.superseded_at IS NULL THEN
        PERFORM lore_count_terms(NEW.space, NEW.tsv, 1);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER notes_terms AFTER INSERT OR DELETE OR UPDATE OF superseded_at ON notes
    FOR EACH ROW EXECUTE FUNCTION lore_note_terms();

-- Fold the changes into the counts (one caller at a time: another returns 0 at once); a count that
-- reaches 0 is removed. Returns how many changes were folded.
CREATE FUNCTION lore_compact_terms() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    folded integer;
    zero_spaces text[];
    zero_words text[];
    zero_word_spaces text[];
BEGIN
    IF NOT pg_try_advisory_xact_lock(x'10be0022'::int) THEN
        RETURN 0;
    END IF;
    WITH gone AS (DELETE FROM note_term_changes RETURNING space, lexeme, delta),
    sums AS (SELECT space, lexeme, sum(delta)::integer AS d FROM gone GROUP BY space, lexeme),
    words AS (
        INSERT INTO note_terms AS t (space, lexeme, notes)
        SELECT space, lexeme, d FROM sums WHERE lexeme <> '' AND d <> 0 ORDER BY space, lexeme
        ON CONFLICT (space, lexeme) DO UPDATE SET notes = t.notes + EXCLUDED.notes
        RETURNING space, lexeme, notes),
    spaces AS (
        INSERT INTO note_term_spaces AS s (space, notes)
        SELECT space, d FROM sums WHERE lexeme = '' AND d <> 0 ORDER BY space
        ON CONFLICT (space) DO UPDATE SET notes = s.notes + EXCLUDED.notes
        RETURNING space, notes)
    SELECT (SELECT count(*) FROM sums),
           ARRAY(SELECT space FROM spaces WHERE notes <= 0),
           ARRAY(SELECT lexeme FROM words WHERE notes <= 0 ORDER BY space, lexeme),
           ARRAY(SELECT space FROM words WHERE notes <= 0 ORDER BY space, lexeme)
      INTO folded, zero_spaces, zero_words, zero_word_spaces;
    DELETE FROM note_terms t USING unnest(zero_word_spaces, zero_words) z(space, lexeme)
        WHERE t.space = z.space AND t.lexeme = z.lexeme AND t.notes <= 0;
    DELETE FROM note_term_spaces WHERE space = ANY(zero_spaces) AND notes <= 0;
    RETURN folded;
END $$;

INSERT INTO note_term_spaces (space, notes)
    SELECT space, count(*) FROM notes WHERE superseded_at IS NULL GROUP BY space;
INSERT INTO note_terms (space, lexeme, notes)
    SELECT space, w, count(*) FROM notes, unnest(tsvector_to_array(ts_filter(tsv, '{a,b,c}'))) w
    WHERE superseded_at IS NULL GROUP BY space, w;
