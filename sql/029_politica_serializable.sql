-- Política serializable (issue 38): lo que cuenta una regla se decide y se consume bajo una
-- sola serialización, la del cliente (docs/arquitectura.md, «Decidir y consumir a la vez»).
--
-- 1. El veredicto «sin firma» que el efecto ya no pudo sostener: al ejecutar, bajo el candado
--    del cliente, la regla pidió firma con los hechos de entonces y el veredicto se elevó a
--    «pide firma» (motivos y autoridad nuevos). ``revalidada`` dice cuándo: la pausa que lo
--    recoge sale de la herramienta, no de after_model.
ALTER TABLE evaluaciones_politica ADD COLUMN revalidada timestamptz;

-- 2. Las líneas de un pedido que ocupa una acción propuesta (los argumentos del modelo, tal
--    como quedaron en la petición de una pausa); NULL = el pedido entero (una cancelación,
--    un reembolso sin líneas, o unos argumentos que no se entienden: ante la duda, todo).
CREATE FUNCTION lineas_de_accion(pedido text, herramienta text, args jsonb) RETURNS int[]
LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN herramienta IN ('compensar_con_vale', 'reenviar') AND args ->> 'linea' ~ '^[0-9]{1,9}$'
            THEN ARRAY[(args ->> 'linea')::int]
        WHEN herramienta = 'reembolsar' AND jsonb_typeof(args -> 'lineas') = 'array'
             AND jsonb_array_length(args -> 'lineas') > 0
            THEN (SELECT CASE WHEN bool_and(n IS NOT NULL) THEN array_agg(n) END
                  FROM (SELECT CASE
                            WHEN jsonb_typeof(e) = 'number' THEN (e #>> '{}')::numeric::int
                            WHEN e ->> 'linea' ~ '^[0-9]{1,9}$' THEN (e ->> 'linea')::int
                        END AS n
                        FROM jsonb_array_elements(args -> 'lineas') AS e) l)
        WHEN herramienta = 'sustituir' AND args ? 'sku_original'
            THEN (SELECT array_agg(l.linea) FROM lineas_pedido l
                  WHERE l.pedido_id = pedido AND l.sku = args ->> 'sku_original')
    END
$$;

-- 3. Lo que reserva cada pausa: cada acción que compensa unidades de un pedido y espera a un
--    encargado, con sus líneas. Una segunda petición por las mismas unidades, desde cualquier
--    conversación, no abre otra tarjeta: ya se está revisando. Dos fuentes:
--    - las aprobaciones en la cola (cada acción de su petición);
--    - los veredictos que piden firma y aún no llegaron a la cola ni se decidieron (el hueco
--      entre el ``when`` y el final del turno, que encola la pausa; los decide la política
--      bajo el candado del cliente). Pasados 10 minutos sin cola, ese turno murió: el
--      conciliador lo rehará y su veredicto volverá a la cola.
CREATE VIEW reservas_pendientes AS
SELECT a.thread_id, a.cliente_id, a.tienda, a.creada,
       upper(trim(ar.accion -> 'args' ->> 'pedido')) AS pedido_id,
       ar.accion ->> 'name' AS herramienta,
       lineas_de_accion(upper(trim(ar.accion -> 'args' ->> 'pedido')), ar.accion ->> 'name',
                        ar.accion -> 'args') AS lineas
FROM aprobaciones_pendientes a
CROSS JOIN LATERAL jsonb_array_elements(coalesce(a.peticion -> 'action_requests', '[]'::jsonb))
     AS ar(accion)
WHERE ar.accion ->> 'name' IN ('reembolsar', 'sustituir', 'compensar_con_vale', 'reenviar', 'cancelar_pedido')
UNION ALL
SELECT e.thread_id, e.cliente_id, e.tienda, e.evaluada,
       upper(trim(e.args ->> 'pedido')), e.herramienta,
       lineas_de_accion(upper(trim(e.args ->> 'pedido')), e.herramienta, e.args)
FROM evaluaciones_politica e
WHERE e.requiere_encargado
  AND e.herramienta IN ('reembolsar', 'sustituir', 'compensar_con_vale', 'reenviar', 'cancelar_pedido')
  AND e.evaluada > now() - interval '10 minutes'
  AND NOT EXISTS (SELECT 1 FROM aprobaciones_pendientes a WHERE a.thread_id = e.thread_id)
  AND NOT EXISTS (SELECT 1 FROM decisiones_encargado d
                  WHERE d.thread_id = e.thread_id AND d.decidida >= e.evaluada);

CREATE INDEX evaluaciones_cliente_idx ON evaluaciones_politica (cliente_id, evaluada);
CREATE INDEX aprobaciones_cliente_idx ON aprobaciones_pendientes (cliente_id);

-- 4. Las acciones que un encargado (o el plazo) rechazó, por pedido: lo rechazado no sale
--    sin firma por otra puerta (un cambio más barato tras un reembolso rechazado).
CREATE VIEW acciones_rechazadas AS
SELECT d.thread_id, d.decidida,
       upper(trim(ar.accion -> 'args' ->> 'pedido')) AS pedido_id,
       ar.accion ->> 'name' AS herramienta
FROM decisiones_encargado d
CROSS JOIN LATERAL jsonb_array_elements(coalesce(d.peticion -> 'action_requests', '[]'::jsonb))
     WITH ORDINALITY AS ar(accion, n)
WHERE d.decisiones -> (ar.n::int - 1) ->> 'type' = 'reject';
