"""Cross-cutting service code: errors, request ids, schemas, pagination, fields and facets."""
