-- Turnos terminados que nadie cerró y efectos que fallan tras la firma.

-- El cierre de un turno apunta qué mensaje del grafo entrega (el id del último mensaje
-- del estado, normalmente la respuesta final del modelo). El conciliador reconoce así,
-- sin falsos positivos, un turno cuyo grafo terminó pero cuyo cierre no llegó a escribirse
-- (la base se cayó entre medias): su último mensaje no está entregado. El índice único
-- hace que la misma respuesta no se entregue dos veces.
ALTER TABLE mensajes_conversacion ADD COLUMN respuesta_de text;
CREATE UNIQUE INDEX mensajes_respuesta_de_idx ON mensajes_conversacion (thread_id, respuesta_de)
    WHERE respuesta_de IS NOT NULL;

-- Una decisión aplicada cuyo efecto aprobado no se pudo hacer (sin stock al ejecutar, precio
-- cambiado...): el error de la herramienta, en español. NULL: ningún efecto aprobado falló.
ALTER TABLE decisiones_encargado ADD COLUMN fallo text;
