"""`git memory review`: the person's page (needs the [review] extra)."""
