-- La vista efectos con todas las operaciones declaradas (reembolso, cambio, cancelación,
-- reenvío, vale, dirección...): cada migración de una operación la recreó con las que había
-- en su rama; esta, la última, la deja con todas. El texto es la salida de
-- agente.nucleo.operaciones.vista_efectos_sql (tests/integracion/test_operaciones_declaradas.py
-- lo compara con la última migración que crea la vista).

CREATE OR REPLACE VIEW efectos AS
SELECT 'reembolso'::text AS tipo, id::bigint, numero::text, thread_id::text, tool_call_id::text,
       pedido_id::text, cliente_id::text, tienda::text, importe::numeric(12,2) AS importe,
       aprobado_por::text, creado::timestamptz AS creado
FROM reembolsos
UNION ALL
SELECT 'sustitucion'::text AS tipo, id::bigint, numero::text, thread_id::text, tool_call_id::text,
       pedido_id::text, cliente_id::text, tienda::text, diferencia::numeric(12,2) AS importe,
       aprobado_por::text, creada::timestamptz AS creado
FROM sustituciones
UNION ALL
SELECT 'cancelacion'::text AS tipo, id::bigint, numero::text, thread_id::text, tool_call_id::text,
       pedido_id::text, cliente_id::text, tienda::text, importe::numeric(12,2) AS importe,
       aprobado_por::text, creada::timestamptz AS creado
FROM cancelaciones
UNION ALL
SELECT 'reenvio'::text AS tipo, id::bigint, numero::text, thread_id::text, tool_call_id::text,
       pedido_id::text, cliente_id::text, tienda::text, valor::numeric(12,2) AS importe,
       aprobado_por::text, creado::timestamptz AS creado
FROM reenvios
UNION ALL
SELECT 'vale'::text AS tipo, id::bigint, numero::text, thread_id::text, tool_call_id::text,
       pedido_id::text, cliente_id::text, tienda::text, importe::numeric(12,2) AS importe,
       aprobado_por::text, creado::timestamptz AS creado
FROM vales
UNION ALL
SELECT 'direccion'::text AS tipo, id::bigint, numero::text, thread_id::text, tool_call_id::text,
       pedido_id::text, cliente_id::text, tienda::text, importe::numeric(12,2) AS importe,
       aprobado_por::text, creado::timestamptz AS creado
FROM cambios_direccion;
