-- La auditoría (y cada lectura de /metrics) lee los mensajes del agente de los últimos días
-- (agente/servicio/auditoria/verdad.py): sin índice por fecha, cada lectura recorría la
-- tabla entera, que solo crece.
CREATE INDEX mensajes_agente_creado_idx ON mensajes_conversacion (creado) WHERE rol = 'agente';
