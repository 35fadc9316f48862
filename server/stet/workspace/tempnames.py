"""What marks the name of a temp file Stet writes before renaming it into place (safe.temp_name
makes them; safe.is_temp_name tells them from look-alikes). Kept apart so that a quick look for
leftovers (the read-only glance) does not import the writer."""

TEMP_MARK = ".stet-tmp-"
