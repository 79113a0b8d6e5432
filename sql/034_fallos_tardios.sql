-- Fallos tardíos del proveedor de pagos (issue 39, punto 2). Stripe puede terminar un
-- reembolso (succeeded) y días después avisar de que falló (refund.updated con
-- status failed: la tarjeta del cliente ya no existe), o confirmar un pago por enlace
-- y que después el banco lo rechace (checkout.session.async_payment_failed). Hasta
-- ahora el libro seguía diciendo 'emitido' o 'confirmado' y nadie se enteraba.
--
-- Ahora el asiento vuelve a 'pendiente' (el dinero no se movió), marcado para una persona
-- (requiere_persona) y con aviso al cliente (avisar), y fallo_tardio_en dice cuándo el
-- proveedor se desdijo. La bandeja de salida no lo reintenta (lo decide una persona), un
-- «completado» posterior del mismo movimiento no lo vuelve a dar por hecho, y la
-- auditoría lo enseña como hallazgo propio (fallos_tardios).

ALTER TABLE reembolsos ADD COLUMN fallo_tardio_en timestamptz;
ALTER TABLE cobros ADD COLUMN fallo_tardio_en timestamptz;

-- La misma vista que sql/007, con la columna nueva al final.
CREATE OR REPLACE VIEW libro_movimientos AS
SELECT 'reembolso'::text AS tipo, r.id, r.numero AS referencia, r.importe, r.estado,
       r.estado = 'emitido' AS completado, r.concepto, r.sustitucion_id, r.thread_id,
       r.tool_call_id, r.pedido_id, r.cliente_id, r.tienda, r.intentos, r.proximo_intento,
       r.ultimo_error, r.requiere_persona, r.marcado_en, r.avisar, r.avisado_en, r.creado,
       r.emitido_en AS completado_en, r.fallo_tardio_en
FROM reembolsos r
UNION ALL
SELECT 'cobro', c.id, c.numero, c.importe, c.estado, c.estado = 'confirmado', 'diferencia',
       c.sustitucion_id, c.thread_id, c.tool_call_id, c.pedido_id, c.cliente_id, c.tienda,
       c.intentos, c.proximo_intento, c.ultimo_error, c.requiere_persona, c.marcado_en,
       c.avisar, c.avisado_en, c.creado, c.confirmado_en, c.fallo_tardio_en
FROM cobros c;
