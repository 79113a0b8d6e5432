-- La vista efectos: una fila por efecto (reembolso, sustitución...), con la misma forma
-- venga de la tabla que venga. La auditoría la lee en vez de unir las tablas a mano.
-- El texto lo da agente.nucleo.operaciones.vista_efectos_sql (una prueba lo compara): una
-- operación con efecto nueva la vuelve a crear en su migración con la salida de esa función.

CREATE OR REPLACE VIEW efectos AS
SELECT 'reembolso'::text AS tipo, id::bigint, numero::text, thread_id::text, tool_call_id::text,
       pedido_id::text, cliente_id::text, tienda::text, importe::numeric(12,2) AS importe,
       aprobado_por::text, creado::timestamptz AS creado
FROM reembolsos
UNION ALL
SELECT 'sustitucion'::text AS tipo, id::bigint, numero::text, thread_id::text, tool_call_id::text,
       pedido_id::text, cliente_id::text, tienda::text, diferencia::numeric(12,2) AS importe,
       aprobado_por::text, creada::timestamptz AS creado
FROM sustituciones;
