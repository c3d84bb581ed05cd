-- Temporal's own databases live beside the gateway's (temporalio/admin-tools sets up their schemas).
CREATE DATABASE temporal;
CREATE DATABASE temporal_visibility;
