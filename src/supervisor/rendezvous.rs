//! A rendezvous port of its own for every tool stage.
//!
//! A torch.distributed program binds a TCP port on its first rendezvous:
//! torchrun's `--master-port` (29500 unless given), or the `MASTER_PORT` its
//! script sets by default for `torch.multiprocessing.spawn`. Stages run at
//! once, so each started the same program on the same port: seen on the H100
//! (`tests/gpu/real/ddp_step.py`, a correct DDP step), every stage but one
//! failed with `EADDRINUSE ... address already in use`, the plain run among
//! them, and the report said the program failed. Each tool stage therefore
//! runs with `MASTER_PORT` and `PET_MASTER_PORT` (torchrun's `--master-port`
//! from the environment) set to a port the system says is free; the plain
//! run keeps the user's. A port written into the program itself is not
//! reached: such a stage fails to bind and runs again alone
//! (`tools::starved`).

use std::net::{Ipv4Addr, TcpListener};
use std::sync::Mutex;

/// The variables torch.distributed and torchrun read the port from.
const PORT_VARIABLES: [&str; 2] = ["MASTER_PORT", "PET_MASTER_PORT"];

/// Gives `env` a free port for the program's rendezvous, replacing any
/// the stage had; leaves it alone if the system names none.
pub fn own_port(env: &mut Vec<(String, String)>) {
    let Some(port) = free_port() else {
        return;
    };
    env.retain(|(key, _)| !PORT_VARIABLES.contains(&key.as_str()));
    for key in PORT_VARIABLES {
        env.push((key.to_string(), port.to_string()));
    }
}

/// A port nothing listens on now, and not given to another stage of this
/// run: the one the system picks for a listener on port 0, closed again.
/// The program binds it seconds later; another process taking it
/// meanwhile is unlikely, and a stage that loses it anyway runs again
/// alone.
fn free_port() -> Option<u16> {
    static GIVEN: Mutex<Vec<u16>> = Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..16 {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).ok()?;
        let port = listener.local_addr().ok()?.port();
        if !given.contains(&port) {
            given.push(port);
            return Some(port);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_stage_gets_a_free_port_in_both_variables_and_no_old_one() {
        let mut env = vec![
            ("MASTER_PORT".to_string(), "29512".to_string()),
            ("CUDAWATCH_STAGE".to_string(), "memcheck".to_string()),
        ];
        own_port(&mut env);
        let value = |key: &str| {
            let found: Vec<&String> = env
                .iter()
                .filter(|(k, _)| k == key)
                .map(|(_, v)| v)
                .collect();
            assert_eq!(found.len(), 1, "{key}: {env:?}");
            found[0].clone()
        };
        let port = value("MASTER_PORT");
        assert_eq!(value("PET_MASTER_PORT"), port);
        assert_ne!(port, "29512");
        // Free: it can be bound now.
        let port: u16 = port.parse().unwrap();
        assert!(TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok());
        assert_eq!(value("CUDAWATCH_STAGE"), "memcheck");
    }
}
