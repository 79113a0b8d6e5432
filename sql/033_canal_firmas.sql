-- Por qué canal llegó cada firma: la web (la bandeja), la CLI (`agente entrar`) o el
-- protocolo de LangGraph (`/langgraph`). Es informativo: quién firma lo fija el token, y el
-- canal sale de cómo se autenticó la petición (el token de la CLI lo lleva firmado).
-- NULL en las firmas de antes de esta migración (canal desconocido).
ALTER TABLE firmas_aprobacion
    ADD COLUMN canal text CHECK (canal IN ('web', 'cli', 'protocolo'));

-- En una solicitud de cambio de política: el canal de quien la propuso y el de quien la
-- firmó o rechazó.
ALTER TABLE solicitudes_politica
    ADD COLUMN canal          text CHECK (canal IN ('web', 'cli', 'protocolo')),
    ADD COLUMN canal_decision text CHECK (canal_decision IN ('web', 'cli', 'protocolo'));
