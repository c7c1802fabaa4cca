-- zz_settings: after the last regression file, the jobs run again (see
-- 000_settings.sql).
SELECT format('ALTER DATABASE %I RESET materialized_table.scheduled_refreshes',
              current_database()) \gexec
\c
SHOW materialized_table.scheduled_refreshes;
