"""The PHP front end: Laravel's scheduler, artisan and Symfony console commands, and the
locks, exits and payment calls in the code they run (tree-sitter-php, never executed)."""
