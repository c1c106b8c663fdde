"""Assembling the Project: one step per source family (cron, systemd, manifests, Python)
turns front-end results into jobs and facts with the link step; the topology step then
gives each job its copies and mounts. ``context.Context`` is all they share; anything one
step passes another is an argument (``analysis.build_project`` shows the order)."""
