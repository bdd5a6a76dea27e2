"""HTTP only: parse, authorise, shape JSON. No SQL here; the store does that."""
