-- La transcripción que ve el cliente: sus mensajes y los del agente (mensajes_conversacion)
-- con los que escribió una persona de la tienda (mensajes_tienda, rol «tienda», con su
-- nombre en ``autor``). Comparten la secuencia de ids: se ordena y se pagina por id.
-- Un solo sitio para la mezcla que leen el chat, la ficha de la bandeja, «Conversaciones»
-- y el protocolo /langgraph; PostgreSQL lleva el filtro por hilo a cada rama (índices
-- (thread_id, id) de las dos tablas).
CREATE VIEW transcripcion AS
SELECT id, thread_id, rol, texto, retenido, creado, NULL::text AS autor FROM mensajes_conversacion
UNION ALL
SELECT id, thread_id, 'tienda', texto, false, creado, autor_nombre FROM mensajes_tienda;
