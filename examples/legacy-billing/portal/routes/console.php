<?php

use Illuminate\Support\Facades\Schedule;

// Card-expiry reminders. withoutOverlapping() keeps its mutex for 1440 minutes unless told
// otherwise: one crashed run silences the reminders until tomorrow.
Schedule::command('cards:remind-expiring')->everyTenMinutes()->withoutOverlapping();
