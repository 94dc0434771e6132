-- Imported sections (import-markdown, import-instructions) are keyed by the folder their file keys
-- are relative to (`root`: the repository's top-level for instruction files, the workspace for
-- markdown), so two repositories of one space with a CLAUDE.md each neither revise nor forget each
-- other's sections, and a repository's instructions are shown only in that repository.
--
-- Existing rows get the workspace their note was first written from (where the import ran), marked
-- `root_guessed`: no row is dropped. An instruction file's key was relative to the repository's
-- top-level, which may be above that folder: the next import in the repository adopts them
-- (lore.store.instructions), and until then session start shows them in that repository.
-- (A row of an export made before, which has no root, is given one the same way: lore.store.transfer.)
ALTER TABLE markdown_sections ADD COLUMN root text NOT NULL DEFAULT '';
ALTER TABLE markdown_sections ADD COLUMN root_guessed boolean NOT NULL DEFAULT false;
UPDATE markdown_sections m SET root_guessed = true, root = coalesce(
    (SELECT n.workspace FROM notes n WHERE n.lineage = m.lineage ORDER BY n.recorded_at, n.version_id LIMIT 1),
    '');
ALTER TABLE markdown_sections DROP CONSTRAINT markdown_sections_pkey;
ALTER TABLE markdown_sections ADD PRIMARY KEY (space, root, file, section);
DROP INDEX markdown_sections_instructions;
CREATE INDEX markdown_sections_instructions ON markdown_sections (space, root, file, first_line)
    WHERE family IS NOT NULL;

-- The instruction sections imported in the repository `p_root` of a space (and those migrated from a
-- folder inside it, not yet adopted), whose note is current, except those of `p_skip` families, in
-- file and line order: what session start lists for a client that does not load them.
CREATE FUNCTION lore_instructions_at(p_space text, p_root text, p_skip text[], p_limit integer)
RETURNS TABLE (lineage bigint, root text, file text, section text, title text, body text,
               first_line integer, total bigint)
LANGUAGE sql STABLE AS $$
    SELECT m.lineage, p_root, m.file, m.section, n.title, left(n.body, 400), m.first_line, count(*) OVER ()
    FROM markdown_sections m
    JOIN notes n ON n.lineage = m.lineage AND n.superseded_at IS NULL
    WHERE m.space = p_space
      AND (m.root = p_root OR (m.root_guessed AND starts_with(m.root, rtrim(p_root, '/') || '/')))
      AND m.family IS NOT NULL AND NOT (m.family = ANY(p_skip))
    ORDER BY m.file COLLATE "C", m.first_line, m.section
    LIMIT p_limit
$$;

-- Session start reads the instruction sections of its own repository (lore_instructions_at).
CREATE OR REPLACE FUNCTION lore_session_snapshot(
    p_spaces text[], p_workspace text, p_max_rows integer, p_space text, p_root text,
    p_handoff_hours integer, p_doing_max integer, p_skip text[], p_instructions_max integer
) RETURNS json LANGUAGE sql STABLE AS $$
    WITH counts AS (SELECT * FROM lore_inbox_counts(p_space)),
    last AS (
        SELECT h.* FROM lore_handoff_last(p_space, p_root, make_interval(hours => p_handoff_hours)) h
        WHERE p_handoff_hours > 0
    ),
    doing AS (SELECT * FROM lore_tasks_doing(p_space, p_doing_max) WHERE EXISTS (SELECT 1 FROM last))
    SELECT json_build_object(
        'now', now(),
        'total', (SELECT count(*) FROM lore_facts_visible(p_spaces)),
        'facts', coalesce((
            SELECT json_agg(f) FROM (
                SELECT lineage, version_id, space, recorded_at, superseded_at, source, workspace,
                       statement, subject, valid_from, valid_to
                FROM lore_facts_ordered(p_spaces, p_workspace, p_max_rows)) f), '[]'::json),
        'inbox', (SELECT inbox FROM counts),
        'unread', (SELECT unread FROM counts),
        'handoff', (SELECT row_to_json(l) FROM last l),
        'doing', coalesce((SELECT json_agg(json_build_array(d.lineage, d.title)
                                            ORDER BY d.updated_at DESC, d.lineage DESC) FROM doing d),
                          '[]'::json),
        'doing_count', coalesce((SELECT max(d.total) FROM doing d), 0),
        'instructions', coalesce((
            SELECT json_agg(i) FROM lore_instructions_at(p_space, p_root, p_skip, p_instructions_max) i
            WHERE p_skip IS NOT NULL), '[]'::json))
$$;
