-- `agente aprobaciones` sin --tienda lista la cola entera, la más antigua primero: sin
-- este índice ordenaba toda la tabla (4 s con un millón de pendientes).
CREATE INDEX aprobaciones_creada_idx ON aprobaciones_pendientes (creada, thread_id);
