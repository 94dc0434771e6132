"""End-to-end tests that drive real agent CLIs (from npm) against local mocks of their model APIs."""
