"""The book's own tooling: chapters, notebooks, exercises, the course, tables, claims."""
