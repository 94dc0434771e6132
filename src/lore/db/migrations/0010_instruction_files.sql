-- Agents' instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, .cursor/rules/*, ...) imported as notes
-- by `lore import-instructions`: each section's provenance (its lines in the file) and the family
-- of the file (lore.instructions.family_of), so that session start can leave out what the client
-- loads from that file itself. NULL family: an ordinary `lore import-markdown` section.
ALTER TABLE markdown_sections
    ADD COLUMN first_line integer CHECK (first_line >= 1),
    ADD COLUMN last_line  integer CHECK (last_line >= first_line),
    ADD COLUMN family     text    CHECK (family IN ('claude', 'agents', 'gemini', 'cursor', 'copilot', 'windsurf', 'cline'));
CREATE INDEX markdown_sections_instructions ON markdown_sections (space, file, first_line) WHERE family IS NOT NULL;

-- The instruction sections of a space whose note is current, except those of `skip` families, in
-- file and line order: what session start lists for a client that does not load those files.
CREATE FUNCTION lore_instructions_here(p_space text, p_skip text[], p_limit integer)
RETURNS TABLE (lineage bigint, file text, section text, title text, body text, first_line integer, total bigint)
LANGUAGE sql STABLE AS $$
    SELECT m.lineage, m.file, m.section, n.title, left(n.body, 400), m.first_line, count(*) OVER ()
    FROM markdown_sections m
    JOIN notes n ON n.lineage = m.lineage AND n.superseded_at IS NULL
    WHERE m.space = p_space AND m.family IS NOT NULL AND NOT (m.family = ANY(p_skip))
    ORDER BY m.file COLLATE "C", m.first_line, m.section
    LIMIT p_limit
$$;
