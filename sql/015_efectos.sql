-- La vista efectos: una fila por efecto (reembolso, sustitución...), con la misma forma
-- venga de la tabla que venga. La auditoría la lee en vez de unir las tablas a mano.
-- El texto lo da agente.nucleo.operaciones.vista_efectos_sql (una prueba lo compara): una
-- operación con efecto nueva la vuelve a crear en su migración con la salida de esa función.

DROP VIEW IF EXISTS efectos;
CREATE VIEW efectos AS
SELECT 'reembolso'::text AS tipo, id, numero, thread_id, tool_call_id, pedido_id, cliente_id, tienda,
       importe::numeric(12,2) AS importe, aprobado_por, creado::timestamptz AS creado
FROM reembolsos
UNION ALL
SELECT 'sustitucion'::text AS tipo, id, numero, thread_id, tool_call_id, pedido_id, cliente_id, tienda,
       diferencia::numeric(12,2) AS importe, aprobado_por, creada::timestamptz AS creado
FROM sustituciones;
