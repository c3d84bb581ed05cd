-- Temporal's own databases live beside the gateway's (auto-setup fills them on first start).
CREATE DATABASE temporal;
CREATE DATABASE temporal_visibility;
